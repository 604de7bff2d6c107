// Serialisable model parameters: flat Float32Arrays + shapes + config, so a model can be
// checkpointed, moved between workers (buffers transferred, not copied) and stored.
import { type ModelConfig, paramSpecs, size, validateModelConfig } from "./config";
import { Rng } from "./random";

export const CHECKPOINT_FORMAT = "collapse-lab/checkpoint@1";

export interface Tensor {
  name: string;
  shape: number[];
  data: Float32Array;
}

/** Adam moments, in the order of `tensors`; optional, so a run can resume exactly. */
export interface OptimizerState {
  step: number;
  m: Float32Array[];
  v: Float32Array[];
}

export interface Checkpoint {
  format: typeof CHECKPOINT_FORMAT;
  config: ModelConfig;
  tensors: Tensor[];
  optimizer?: OptimizerState;
}

export const INIT_STD = 0.02; // GPT-2 initialisation scale

/** Fresh parameters: N(0, 0.02) matrices and embeddings, LN gains 1, biases 0. */
export function initCheckpoint(config: ModelConfig, seed: number): Checkpoint {
  validateModelConfig(config);
  const rng = Rng.seed(seed);
  const tensors = paramSpecs(config).map((s) => {
    const data = new Float32Array(size(s.shape));
    if (s.init === "ones") data.fill(1);
    else if (s.init === "normal")
      for (let i = 0; i < data.length; i++) data[i] = INIT_STD * rng.normal();
    return { name: s.name, shape: [...s.shape], data };
  });
  return { format: CHECKPOINT_FORMAT, config: { ...config }, tensors };
}

/** Throws a clear error when a checkpoint does not fit its own config (bad file, wrong version). */
export function validateCheckpoint(ck: Checkpoint): Checkpoint {
  if (!ck || ck.format !== CHECKPOINT_FORMAT)
    throw new Error(
      `not a checkpoint: format is ${JSON.stringify(ck?.format)}, expected "${CHECKPOINT_FORMAT}"`,
    );
  validateModelConfig(ck.config);
  const specs = paramSpecs(ck.config);
  if (!Array.isArray(ck.tensors) || ck.tensors.length !== specs.length)
    throw new Error(`checkpoint has ${ck.tensors?.length} tensors, config needs ${specs.length}`);
  specs.forEach((s, i) => {
    const t = ck.tensors[i];
    if (t.name !== s.name)
      throw new Error(`checkpoint tensor ${i} is "${t.name}", expected "${s.name}"`);
    if (t.shape.join(",") !== s.shape.join(","))
      throw new Error(`checkpoint tensor ${s.name} has shape [${t.shape}], expected [${s.shape}]`);
    if (!(t.data instanceof Float32Array) || t.data.length !== size(s.shape))
      throw new Error(
        `checkpoint tensor ${s.name} has ${t.data?.length} values, expected ${size(s.shape)}`,
      );
  });
  const o = ck.optimizer;
  if (o) {
    const fits = (xs: Float32Array[]) =>
      Array.isArray(xs) &&
      xs.length === specs.length &&
      xs.every((a, i) => a instanceof Float32Array && a.length === size(specs[i].shape));
    if (!Number.isInteger(o.step) || o.step < 0 || !fits(o.m) || !fits(o.v))
      throw new Error("checkpoint optimizer state does not match its tensors");
  }
  return ck;
}

/** A deep copy (new buffers), e.g. to freeze a reference model or snapshot a simulator. */
export function cloneCheckpoint(ck: Checkpoint, { withOptimizer = true } = {}): Checkpoint {
  const copy: Checkpoint = {
    format: ck.format,
    config: { ...ck.config },
    tensors: ck.tensors.map((t) => ({ name: t.name, shape: [...t.shape], data: t.data.slice() })),
  };
  if (withOptimizer && ck.optimizer) {
    copy.optimizer = {
      step: ck.optimizer.step,
      m: ck.optimizer.m.map((a) => a.slice()),
      v: ck.optimizer.v.map((a) => a.slice()),
    };
  }
  return copy;
}

/** The buffers to list as transferables when posting a checkpoint to another worker. */
export function transferables(ck: Checkpoint): ArrayBuffer[] {
  const bufs = ck.tensors.map((t) => t.data.buffer as ArrayBuffer);
  if (ck.optimizer)
    bufs.push(
      ...ck.optimizer.m.map((a) => a.buffer as ArrayBuffer),
      ...ck.optimizer.v.map((a) => a.buffer as ArrayBuffer),
    );
  return [...new Set(bufs)];
}
