// The tiny models are deterministic (same seed, same bytes), small, and their reference
// tokenizers round-trip text; the WordPiece reference handles unknown words and punctuation.
import { describe, it, expect } from "vitest";
import {
  makeTinyBert,
  makeTinyGpt2,
  referenceWordPiece,
  tinyModelFiles,
  TinyGpt2Reference,
} from "../../src/lm/tiny";

const bytes = (files: Record<string, string | Uint8Array>) =>
  Object.values(files).reduce((n, f) => n + f.length, 0);

describe("tiny models", () => {
  it("are byte-identical for the same seed and differ across seeds", () => {
    const a = makeTinyGpt2({ seed: 4 }).files["onnx/model.onnx"] as Uint8Array;
    const b = makeTinyGpt2({ seed: 4 }).files["onnx/model.onnx"] as Uint8Array;
    const c = makeTinyGpt2({ seed: 5 }).files["onnx/model.onnx"] as Uint8Array;
    expect(Buffer.compare(a, b)).toBe(0);
    expect(Buffer.compare(a, c)).not.toBe(0);
    expect(makeTinyBert({ seed: 1 }).files["config.json"]).toBe(
      makeTinyBert({ seed: 1 }).files["config.json"],
    );
  });

  it("stay small (generated at test time, under 400 KB in all)", () => {
    const total = Object.values(tinyModelFiles()).reduce((n, f) => n + bytes(f), 0);
    expect(total).toBeLessThan(400_000);
  });

  it("the byte-level BPE reference round-trips any text, specials included", () => {
    const { bpe } = new TinyGpt2Reference(makeTinyGpt2());
    for (const text of [
      "",
      "plain ascii",
      "Ünïcödé, 日本語, emoji 🙂💸, \u0000 control",
      "<|im_start|>user\nhi<|im_end|>\n",
    ]) {
      expect(bpe.decode(bpe.encode(text), { skipSpecial: false })).toBe(text);
    }
    expect(bpe.decode(bpe.encode("<|im_start|>hi<|im_end|>"))).toBe("hi");
  });

  it("the WordPiece reference lower-cases, splits punctuation and maps unknown words to [UNK]", () => {
    const { vocab } = makeTinyBert();
    const toks = (t: string) => referenceWordPiece(vocab, t).map((i) => vocab[i]);
    expect(toks("Donating, SAVE!")).toEqual([
      "[CLS]",
      "d",
      "##o",
      "##n",
      "##a",
      "##t",
      "##ing",
      ",",
      "save",
      "!",
      "[SEP]",
    ]);
    expect(toks("help children")).toEqual(["[CLS]", "help", "children", "[SEP]"]);
    expect(toks("Café")).toEqual(["[CLS]", "c", "##a", "##f", "##e", "[SEP]"]);
    expect(toks("€5 ok")).toEqual(["[CLS]", "[UNK]", "o", "##k", "[SEP]"]); // € is no punctuation: "€5" is one unknown word
  });
});
