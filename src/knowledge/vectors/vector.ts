/** The embedder contract and the vector arithmetic the embedders share. */

export interface Embedder {
  /** Model identity; vectors from another model are re-computed. */
  readonly model: string;
  embed(texts: string[]): Promise<Float32Array[]>;
  /** Releases what the embedder holds (the ONNX embedder's sessions); its owner calls it when done. */
  close?(): Promise<void>;
}

/** Scales `v` in place to unit length (a zero vector stays zero) and returns it. */
export function normalise(v: Float32Array): Float32Array {
  let n = 0;
  for (const x of v) n += x * x;
  n = Math.sqrt(n) || 1;
  for (let i = 0; i < v.length; i++) v[i]! /= n;
  return v;
}
