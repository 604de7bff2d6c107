// A person's own words mapped to the act they stand for, when a real LM is loaded (the LM lab's
// instruct model): as the LM simulator does (simulators/lm.ts), every allowed act's label is
// scored as a continuation of the benchmark's act-label prompt (the transcript so far, in text
// style) and p(act) = softmax(label log-likelihood) over the allowed acts — here with the
// person's words added to the transcript and the label asked for as their reply in the study's
// standard wording. A decision the benchmark can read from the words (a stated amount) is taken
// as stated. The page shows the reading and lets the person change it before it counts.
import { benchmarkModule } from "../../benchmarks/registry";
import type { Benchmark, Dialogue } from "../../benchmarks/types";
import type { LanguageModel } from "../../lm/types";

export interface Reading {
  act: number; // the most likely act
  probs: { act: number; p: number }[]; // every allowed act, most likely first
  how: "stated" | "lm";
}

/** At most this many characters of a person's text go into the prompt. */
export const MAX_FREE_TEXT = 300;

export async function readReply(
  lm: LanguageModel,
  bench: Benchmark,
  d: Dialogue,
  text: string,
): Promise<Reading> {
  const m = benchmarkModule(bench.id);
  if (!m.lm) throw new Error(`${m.title} has no prompts for real LMs`);
  const words = text.replace(/\s+/g, " ").trim().slice(0, MAX_FREE_TEXT);
  if (!words) throw new Error("write a reply first");
  const { prompt, acts, continuations } = m.lm.actLabelPrompt(d, "text");
  if (!("text" in prompt)) throw new Error("the act-label prompt is not a text prompt");
  // a stated outcome on the benchmark's grid is taken as stated (what the LM lab reads from replies too)
  if (m.lm.decisionDue(d)) {
    const stated = m.lm.parseOutcome(words);
    const act =
      stated === null
        ? -1
        : acts.find((a) => m.lm!.parseOutcome(bench.acts[a].templates[0]) === stated);
    if (act !== undefined && act >= 0)
      return {
        act,
        probs: acts.map((a) => ({ act: a, p: a === act ? 1 : 0 })).sort((x, y) => y.p - x.p),
        how: "stated",
      };
  }
  const user = m.roles.user;
  const framed = {
    text: `${prompt.text} ${words}\n(${user}'s reply in the study's standard wording:)\n${user}:`,
  };
  const scores = await lm.score(framed, continuations);
  const max = Math.max(...scores.map((s) => s.logprob));
  const w = scores.map((s) => Math.exp(s.logprob - max));
  const z = w.reduce((a, b) => a + b, 0);
  const probs = acts.map((act, i) => ({ act, p: w[i] / z })).sort((a, b) => b.p - a.p);
  return { act: probs[0].act, probs, how: "lm" };
}
