// The Dialogues page on a real RunReport (a tiny experiment run in beforeAll): every sampled
// dialogue is listed and counted; each filter (condition, opponent, latent type, outcome, seed)
// narrows the visible transcripts to matching ones; every line's text is one of its act's
// templates, with the same wording on every render; humans show their latent type, every
// dialogue its card and donation; an impossible filter gets a message; text is never HTML.
import { cleanup, fireEvent, render, screen, within } from "@testing-library/svelte";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import DialoguesPage from "../../src/app/pages/DialoguesPage.svelte";
import source from "../../src/app/pages/DialoguesPage.svelte?raw";
import { ACTS, MAX_EXCHANGES } from "../../src/benchmarks/persuasion/world";
import type { RunReport } from "../../src/experiment/experiment";
import { buildReport, collapsed } from "./report-fixture";

let report: RunReport;
let total: number;
beforeAll(async () => {
  report = await buildReport();
  total = report.conditions.reduce(
    (n, c) => n + c.seeds.reduce((m, s) => m + s.samples.length, 0),
    0,
  );
});
afterEach(() => cleanup());

const shown = () => screen.queryAllByTestId("dialogue");
const count = () => screen.getByTestId("count").textContent!;
const pick = (testid: string, value: string) =>
  fireEvent.change(screen.getByTestId(testid), { target: { value } });
const transcripts = () =>
  shown().map((a) =>
    [...a.querySelectorAll(".transcript li")].map((li) => li.querySelector(".text")!.textContent),
  );

describe("DialoguesPage", () => {
  it("counts every sampled dialogue and shows the first page of transcripts", async () => {
    render(DialoguesPage, { report });
    expect(total).toBeGreaterThan(40);
    expect(count()).toContain(`${total} of ${total} dialogues match`);
    expect(shown().length).toBe(20);
    await fireEvent.click(screen.getByRole("button", { name: /show 20 more/i }));
    expect(shown().length).toBe(40);
  });

  it("renders every line from its act's templates, Persuader and Persuadee taking turns, with stable wording", () => {
    render(DialoguesPage, { report });
    for (const article of shown()) {
      const lines = [...article.querySelectorAll(".transcript li")] as HTMLElement[];
      expect(lines.length).toBeGreaterThan(1);
      lines.forEach((li, i) => {
        const act = ACTS.find((a) => a.name === li.dataset.act)!;
        expect(act.templates).toContain(li.querySelector(".text")!.textContent);
        // agent and user alternate; after the last exchange the user also states a donation
        expect(li.querySelector(".who")!.textContent).toBe(
          i % 2 === 0 && i < 2 * MAX_EXCHANGES ? "Persuader" : "Persuadee",
        );
      });
      // a decision never asked for is marked as such
      expect(lines.at(-1)!.textContent!.includes("after the Persuader's last turn")).toBe(
        lines.length === 2 * MAX_EXCHANGES + 1,
      );
    }
    const first = transcripts();
    cleanup();
    render(DialoguesPage, { report });
    expect(transcripts()).toEqual(first);
  });

  it("filters by condition, opponent and seed", async () => {
    render(DialoguesPage, { report });
    const vs = report.conditions.find((c) => c.id === "vs")!;
    await pick("filter-condition", "vs");
    const nVs = vs.seeds.reduce((n, s) => n + s.samples.length, 0);
    expect(count()).toContain(`${nVs} of ${total}`);
    expect(shown().every((a) => a.dataset.condition === "vs")).toBe(true);
    await pick("filter-opponent", "train");
    expect(shown().length).toBeGreaterThan(0);
    expect(
      shown().every((a) => a.dataset.opponent === "train" && a.dataset.condition === "vs"),
    ).toBe(true);
    expect(shown()[0].textContent).toContain("Verbalized Sampling");
    await pick("filter-seed", String(vs.seeds[1].seed));
    const nSeed = vs.seeds[1].samples.filter((s) => s.opponent === "train").length;
    expect(count()).toContain(`${nSeed} of ${total}`);
    expect(
      shown().every((a) =>
        within(a).getByRole("heading").textContent!.includes(`seed ${vs.seeds[1].seed}`),
      ),
    ).toBe(true);
  });

  it("filters humans by latent type and shows the type; a simulator has none", async () => {
    render(DialoguesPage, { report });
    const humans = report.conditions
      .flatMap((c) => c.seeds.flatMap((s) => s.samples))
      .filter((s) => s.opponent === "humans");
    const type = humans[0].type;
    const name = report.world.types[type].name;
    await pick("filter-type", String(type));
    expect(count()).toContain(`${humans.filter((s) => s.type === type).length} of ${total}`);
    for (const a of shown()) {
      expect(a.dataset.opponent).toBe("humans");
      expect(a.textContent).toContain(
        `Latent type:${name} — ${report.world.types[type].description}`,
      );
    }
    await pick("filter-opponent", "train");
    expect(shown().length).toBe(0);
    expect(collapsed(screen.getByTestId("empty").textContent)).toMatch(
      /Simulators have no latent type/,
    );
  });

  it("filters by outcome: successes donated at least $1, failures less", async () => {
    render(DialoguesPage, { report });
    const all = report.conditions.flatMap((c) => c.seeds.flatMap((s) => s.samples));
    const wins = all.filter((s) => s.success).length;
    await pick("filter-outcome", "success");
    expect(count()).toContain(`${wins} of ${total}`);
    for (const a of shown())
      expect(
        Number(/donated \$(\d\.\d\d)/.exec(within(a).getByTestId("outcome").textContent!)?.[1]),
      ).toBeGreaterThanOrEqual(1);
    await pick("filter-outcome", "failure");
    expect(count()).toContain(`${all.length - wins} of ${total}`);
    for (const a of shown()) {
      const text = within(a).getByTestId("outcome").textContent!;
      expect(text).toMatch(/failure$/);
      expect(
        text === "no donation — failure" || Number(/donated \$(\d\.\d\d)/.exec(text)![1]) < 1,
      ).toBe(true);
    }
  });

  it("shows the persona card in words and never renders text as HTML", () => {
    render(DialoguesPage, { report });
    const s = report.conditions[0].seeds[0].samples[0];
    const words = s.card.map((c) => ACTS[c].templates[0]).join(", ");
    expect(shown()[0].textContent).toContain(`Persona card:${words}`);
    expect(source).not.toMatch(/\{@html/);
  });
});
