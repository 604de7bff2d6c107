// The config's `remote` entries (panel members and training simulators): what is accepted and
// what is refused with a message that names the path.
import { describe, expect, it } from "vitest";
import { merge, validateConfig } from "../../src/experiment/config";
import { presetConfig } from "../../src/experiment/presets";

const base = presetConfig("persuasion-smoke");
const withMember = (member: unknown) => () =>
  validateConfig({ ...base, panel: [...base.panel, member] });
const remote = { baseUrl: "http://127.0.0.1:8000/v1", model: "m", mode: "direct" };

describe("remote entries in the experiment config", () => {
  it("accepts a remote panel member and remote training simulators", () => {
    const c = validateConfig(
      merge(
        {
          ...base,
          panel: [
            ...base.panel,
            { name: "r", remote: { ...remote, protocol: "text", apiKeyEnv: "VLLM_KEY" } },
          ],
        },
        {
          simulator: {
            remote: {
              single: remote,
              ensemble: [remote, remote],
              vs: { ...remote, mode: "vs", k: 3 },
            },
          },
        },
      ),
    );
    expect(c.panel.at(-1)!.remote!.apiKeyEnv).toBe("VLLM_KEY");
    expect(c.simulator.remote!.ensemble).toHaveLength(2);
  });

  it("refuses bad remote entries, naming the path", () => {
    expect(withMember({ name: "r", remote: { ...remote, baseUrl: "127.0.0.1:8000" } })).toThrow(
      /panel\.5\.remote\.baseUrl: expected an http\(s\) URL/,
    );
    expect(withMember({ name: "r", remote: { ...remote, baseUrl: "http://u:p@h/v1" } })).toThrow(
      /no credentials or query string/,
    );
    expect(
      withMember({ name: "r", remote: { ...remote, baseUrl: "http://h/v1?api_key=sk-x" } }),
    ).toThrow(/give the API key through apiKeyEnv/);
    expect(withMember({ name: "r", remote: { ...remote, apiKey: "sk-x" } })).toThrow(
      /panel\.5\.remote\.apiKey: unknown key/,
    );
    expect(withMember({ name: "r", remote: { ...remote, apiKeyEnv: "not a name" } })).toThrow(
      /an environment variable's name/,
    );
    expect(withMember({ name: "r", remote: { ...remote, k: 3 } })).toThrow(
      /panel\.5\.remote\.k: only for mode "vs"/,
    );
    expect(
      withMember({ name: "r", remote: { ...remote, mode: "vs", scoring: "logprobs" } }),
    ).toThrow(/remote\.scoring: only for mode "direct"/);
    expect(withMember({ name: "r", gamma: 3, remote })).toThrow(
      /panel\.5\.gamma: a remote member \(with remote\) is not pretrained here/,
    );
    expect(withMember({ name: "r", lm: { model: "./m", mode: "direct" }, remote })).toThrow(
      /not both/,
    );
    expect(() => validateConfig(merge(base, { simulator: { remote: { vs: remote } } }))).toThrow(
      /simulator\.remote\.vs\.mode: the vs condition's remote simulator has mode "vs"/,
    );
  });
});
