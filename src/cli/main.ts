// The collapse-lab command line. Bad flags print one clear line and exit with code 2.
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { createBackend } from "../engine/backends";
import { parameterCount } from "../engine/config";
import { DEFAULT_PATTERN_TASK, runPatternTask, type PatternProgress } from "../demo/pattern-task";
import { throttle } from "../service/throttle";
import { fixed, pct, seconds } from "./format";

const USAGE_ERROR = 2;

function integer(min: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`expected an integer ≥ ${min}, got "${value}"`);
    return n;
  };
}

const program = new Command()
  .name("collapse-lab")
  .description("See and test simulator collapse in multi-agent RL, and its fixes.")
  .exitOverride()
  .configureOutput({ writeErr: (s) => process.stderr.write(s) })
  .showHelpAfterError(false);

program
  .command("demo")
  .description("train a small policy with GRPO, from a random start and a reward only, to emit a cue-dependent 4-token pattern")
  .addOption(new Option("--backend <name>", "engine backend (webgpu runs in the browser app)").choices(["wasm", "cpu"]).default("wasm"))
  .option("--seed <n>", "random seed", integer(0), DEFAULT_PATTERN_TASK.seed)
  .option("--steps <n>", "GRPO updates", integer(1), DEFAULT_PATTERN_TASK.steps)
  .option("--json", "print the result as JSON instead of text")
  .action(async (opts: { backend: "wasm" | "cpu"; seed: number; steps: number; json?: boolean }) => {
    const { backend, info } = await createBackend(opts.backend);
    const cfg = { ...DEFAULT_PATTERN_TASK, seed: opts.seed, steps: opts.steps };
    const log = (s: string) => (opts.json ? process.stderr : process.stdout).write(s + "\n");
    log(`collapse-lab demo: GRPO on the pattern task — backend ${info.name}, seed ${cfg.seed}, ${cfg.steps} steps`);
    log(`policy: ${parameterCount(cfg.model)} parameters (d ${cfg.model.d}, ${cfg.model.layers} layer); ${cfg.groups} groups × ${cfg.groupSize} rollouts per step`);
    const report = throttle((p: PatternProgress) => {
      const exact = p.exact === undefined ? "" : `  exact ${pct(p.exact).padStart(4)}`;
      log(`step ${String(p.step).padStart(4)}/${p.steps}  reward ${fixed(p.reward)}${exact}  entropy ${fixed(p.entropy)}  KL ${fixed(p.kl)}`);
    }, 500);
    const r = await runPatternTask(backend, cfg, { onProgress: report });
    report.flush();
    if (opts.json) {
      const { checkpoint: _, ...rest } = r;
      process.stdout.write(JSON.stringify({ backend: info.name, ...rest }, null, 2) + "\n");
    } else {
      log(`result: exact pattern ${pct(r.initialExact)} → ${pct(r.exact)} of ${cfg.evalRows} sampled rollouts, mean reward ${fixed(r.reward)}, ${seconds(r.ms)}`);
    }
  });

try {
  await program.parseAsync(process.argv);
} catch (e) {
  if (e instanceof CommanderError) {
    // help and version exit 0; every usage error exits 2 after commander printed its one line
    process.exit(e.exitCode === 0 ? 0 : USAGE_ERROR);
  }
  process.stderr.write(`collapse-lab: ${(e as Error).message}\n`);
  process.exit(1);
}
