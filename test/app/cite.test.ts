// The Cite dialog's BibTeX: what it shows parses with a BibTeX parser (@retorquere/bibtex-parser,
// the one behind Better BibTeX for Zotero) into the two entries, and states the same facts as
// CITATION.cff and package.json; "What the words mean" gives the paper's names for our conditions.
// Opening the dialog in a real browser: test/e2e/app.test.ts.
import { readFileSync } from "node:fs";
import { cleanup, fireEvent, render, screen } from "@testing-library/svelte";
import { parse } from "@retorquere/bibtex-parser";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import CiteDialog from "../../src/app/components/CiteDialog.svelte";
import Story from "../../src/app/components/Story.svelte";
import { PAPER, TOOL_TITLE } from "../../src/app/lib/cite";
import { parseReport } from "../../src/experiment/report-schema";

const pkg = JSON.parse(readFileSync("package.json", "utf8")) as {
  version: string;
  license: string;
};
const cff = readFileSync("CITATION.cff", "utf8");
const FAMILY = [
  "Yu",
  "Tomlin",
  "Abdulhai",
  "Lu",
  "Chong",
  "Hou",
  "Soylu",
  "Levine",
  "Manning",
  "Shi",
];

afterEach(cleanup);
beforeAll(() => {
  // jsdom has <dialog> but not its modal API; Chromium's is used in test/e2e/app.test.ts
  HTMLDialogElement.prototype.showModal ??= function (this: HTMLDialogElement) {
    this.open = true;
  };
});

/** The dialog rendered and opened with its button (its content exists only while open). */
async function opened() {
  render(CiteDialog);
  expect(screen.queryByTestId("bibtex-paper")).toBeNull();
  await fireEvent.click(screen.getByTestId("cite-open"));
}

/** The shown text parsed; a parse error or an entry left out fails. */
function parsedShown(testid: string) {
  const text = screen.getByTestId(testid).textContent ?? "";
  const lib = parse(text, { sentenceCase: false });
  expect(lib.errors).toEqual([]);
  expect(lib.entries).toHaveLength(1);
  return lib.entries[0];
}

describe("the Cite dialog's BibTeX", () => {
  it("the paper: @misc with its arXiv eprint, title and ten authors", async () => {
    await opened();
    const e = parsedShown("bibtex-paper");
    expect(e.type).toBe("misc");
    expect(e.fields).toMatchObject({
      eprint: PAPER.arxiv,
      archiveprefix: "arXiv",
      primaryclass: "cs.CL",
      year: "2026",
      url: PAPER.url,
    });
    expect(e.fields.title).toBe(PAPER.title);
    expect(e.fields.author?.map((a) => a.lastName)).toEqual(FAMILY);
  });

  it("the tool: @misc with the version from package.json", async () => {
    await opened();
    const e = parsedShown("bibtex-tool");
    expect(e.type).toBe("misc");
    expect(e.fields.title).toBe(TOOL_TITLE);
    expect(e.fields.author?.map((a) => a.name)).toEqual(["The collapse-lab authors"]);
    expect(e.fields.howpublished).toContain(`version ${pkg.version}`);
  });

  it("a broken entry does not parse (the check can fail)", () => {
    expect(parse("@misc{x, title = {unclosed, year = 2026}").errors).not.toEqual([]);
  });
});

describe("CITATION.cff", () => {
  it("states the tool's version and licence from package.json, and the paper's title, arXiv id and authors", () => {
    expect(cff).toMatch(new RegExp(`^version: ${pkg.version.replaceAll(".", "\\.")}$`, "m"));
    expect(cff).toMatch(new RegExp(`^license: ${pkg.license}$`, "m"));
    expect(cff).toContain(`title: "${TOOL_TITLE}"`);
    expect(cff).toContain(`title: "${PAPER.title}"`);
    expect(cff).toContain(`value: "arXiv:${PAPER.arxiv}"`);
    const families = [...cff.matchAll(/^\s+- family-names: (.+)$/gm)].map((m) => m[1]);
    expect(families).toEqual(FAMILY);
  });
});

describe("What the words mean", () => {
  it("gives the paper's names where ours differ: Self-Play and Population Self-Play", () => {
    const report = parseReport(readFileSync("public/recorded/persuasion-paper.json", "utf8"));
    render(Story, { report });
    const names = screen.getByTestId("paper-names");
    expect(names.textContent?.replace(/\s+/g, " ")).toMatch(
      /the paper's Self-Play and Population Self-Play/,
    );
    expect(names.previousElementSibling?.textContent).toBe("cotrain, population");
  });
});
