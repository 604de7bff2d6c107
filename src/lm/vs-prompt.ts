// Verbalized Sampling's instruction (VS-Standard, Zhang et al. 2025, worded as SCOPE asks its user
// simulators): ask for k replies with their probabilities as JSON, which vs-parse.ts reads. Every
// benchmark's VS prompt is its own persona and conversation followed by this instruction.

export interface VsPromptOptions {
  k?: number; // candidates asked for; default 5 (SCOPE's and the VS paper's setting)
  /** VS-Standard's optional tail instruction: ask that each response have probability below this. */
  probabilityBelow?: number;
}

/** The instruction appended to a system prompt, and the k it asks for; bad options throw, naming the caller. */
export function vsInstruction(
  opts: VsPromptOptions = {},
  caller = "vsPrompt",
): { k: number; text: string } {
  const k = opts.k ?? 5;
  if (!(Number.isInteger(k) && k >= 1))
    throw new Error(`${caller}: k must be a positive integer, got ${k}`);
  const below = opts.probabilityBelow;
  if (below !== undefined && !(below > 0 && below <= 1))
    throw new Error(`${caller}: probabilityBelow must lie in (0, 1], got ${below}`);
  const text = [
    `Generate ${k} different responses to your interlocutor that are coherent with the chat history and aligned with your persona.`,
    `Output in JSON format with the key "responses" (a list of dicts with "text" and "probability"). ` +
      `The "text" field is your reply only; the "probability" field represents the empirical probability of each response, ranging from 0 to 1.`,
    ...(below !== undefined
      ? [
          `Randomly sample the responses from the full distribution, with the probability of each response below ${below}.`,
        ]
      : []),
    "Only output the JSON object, no other text.",
  ].join("\n");
  return { k, text };
}
