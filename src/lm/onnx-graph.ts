// A small builder for ONNX graphs on top of onnx-proto (the protobuf definitions): named
// inputs and outputs with symbolic dims, float32 / int64 initializers, and nodes with typed
// attributes. Used to write the project's tiny test models and the toy-model export; it knows
// nothing about transformers, only ONNX.
import onnxProto from "onnx-proto";

const { onnx } = onnxProto;

export const OPSET = 17; // LayerNormalization became a standard op in opset 17

export type ElemType = "float32" | "int64" | "bool";
const ELEM: Record<ElemType, number> = {
  float32: onnx.TensorProto.DataType.FLOAT,
  int64: onnx.TensorProto.DataType.INT64,
  bool: onnx.TensorProto.DataType.BOOL,
};

/** A dimension: a fixed size or a symbol (e.g. "batch_size") that ORT reports in inputMetadata. */
export type Dim = number | string;

/** Attribute values; plain numbers are ints, floats must be wrapped with `float()`. */
export type Attr = number | number[] | string | { float: number };
export const float = (x: number) => ({ float: x });

function attribute(name: string, v: Attr): onnxProto.onnx.IAttributeProto {
  const T = onnx.AttributeProto.AttributeType;
  if (typeof v === "number") {
    if (!Number.isInteger(v))
      throw new Error(`attribute ${name}: ${v} is not an integer; wrap floats with float()`);
    return { name, type: T.INT, i: v };
  }
  if (typeof v === "string") return { name, type: T.STRING, s: new TextEncoder().encode(v) };
  if (Array.isArray(v)) return { name, type: T.INTS, ints: v };
  return { name, type: T.FLOAT, f: v.float };
}

function valueInfo(name: string, elem: ElemType, dims: Dim[]): onnxProto.onnx.IValueInfoProto {
  return {
    name,
    type: {
      tensorType: {
        elemType: ELEM[elem],
        shape: {
          dim: dims.map((d) => (typeof d === "number" ? { dimValue: d } : { dimParam: d })),
        },
      },
    },
  };
}

function bytesOf(data: Float32Array | BigInt64Array | Uint8Array): Uint8Array {
  // ONNX raw_data is little-endian, as are typed arrays on every platform this runs on
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength).slice();
}

export class OnnxGraph {
  readonly #nodes: onnxProto.onnx.INodeProto[] = [];
  readonly #inits: onnxProto.onnx.ITensorProto[] = [];
  readonly #inputs: onnxProto.onnx.IValueInfoProto[] = [];
  readonly #outputs: onnxProto.onnx.IValueInfoProto[] = [];
  readonly #names = new Set<string>();
  #next = 0;

  constructor(readonly name: string) {}

  #fresh(hint: string): string {
    let n: string;
    do n = `${hint}_${this.#next++}`;
    while (this.#names.has(n));
    this.#names.add(n);
    return n;
  }

  #claim(name: string): string {
    if (this.#names.has(name))
      throw new Error(`ONNX graph ${this.name}: the name ${name} is used twice`);
    this.#names.add(name);
    return name;
  }

  input(name: string, elem: ElemType, dims: Dim[]): string {
    this.#inputs.push(valueInfo(this.#claim(name), elem, dims));
    return name;
  }

  /** Declares `value` (a node output) as a graph output under `name` (through Identity if renamed). */
  output(value: string, name: string, elem: ElemType, dims: Dim[]): string {
    const out = value === name ? name : this.op("Identity", [value], {}, name);
    this.#outputs.push(valueInfo(out, elem, dims));
    return out;
  }

  /** A float32 initializer (a weight). */
  weight(name: string, data: Float32Array, dims: number[]): string {
    if (data.length !== dims.reduce((a, b) => a * b, 1))
      throw new Error(`weight ${name}: ${data.length} values for shape [${dims}]`);
    this.#inits.push({
      name: this.#claim(name),
      dataType: ELEM.float32,
      dims,
      rawData: bytesOf(data),
    });
    return name;
  }

  constFloat(
    values: number[] | number,
    dims: number[] = Array.isArray(values) ? [values.length] : [],
  ): string {
    const data = Float32Array.from(Array.isArray(values) ? values : [values]);
    const name = this.#fresh("const_f");
    this.#inits.push({ name, dataType: ELEM.float32, dims, rawData: bytesOf(data) });
    return name;
  }

  constInt(
    values: number[] | number,
    dims: number[] = Array.isArray(values) ? [values.length] : [],
  ): string {
    const data = BigInt64Array.from((Array.isArray(values) ? values : [values]).map(BigInt));
    const name = this.#fresh("const_i");
    this.#inits.push({ name, dataType: ELEM.int64, dims, rawData: bytesOf(data) });
    return name;
  }

  /** One node with one output; returns the output's name (fresh unless `out` is given). */
  op(type: string, inputs: string[], attrs: Record<string, Attr> = {}, out?: string): string {
    return this.opN(type, inputs, 1, attrs, out ? [out] : undefined)[0];
  }

  opN(
    type: string,
    inputs: string[],
    n: number,
    attrs: Record<string, Attr> = {},
    outs?: string[],
  ): string[] {
    const outputs = outs
      ? outs.map((o) => this.#claim(o))
      : Array.from({ length: n }, () => this.#fresh(type.toLowerCase()));
    this.#nodes.push({
      opType: type,
      name: this.#fresh(`n_${type}`),
      input: inputs,
      output: outputs,
      attribute: Object.entries(attrs).map(([k, v]) => attribute(k, v)),
    });
    return outputs;
  }

  /** The serialized ModelProto. */
  encode(producer = "collapse-lab"): Uint8Array {
    if (this.#outputs.length === 0) throw new Error(`ONNX graph ${this.name} has no outputs`);
    const model = onnx.ModelProto.create({
      irVersion: 8,
      producerName: producer,
      opsetImport: [{ domain: "", version: OPSET }],
      graph: {
        name: this.name,
        node: this.#nodes,
        initializer: this.#inits,
        input: this.#inputs,
        output: this.#outputs,
      },
    });
    return onnx.ModelProto.encode(model).finish();
  }
}
