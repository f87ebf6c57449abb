/** The one vector normaliser (the embedders and the reconcile matcher's semantic signal share it). */

/** Scales `v` in place to unit length (a zero vector stays zero) and returns it. Copy first to keep the input. */
export function normalise(v: Float32Array): Float32Array {
  let n = 0;
  for (const x of v) n += x * x;
  n = Math.sqrt(n) || 1;
  for (let i = 0; i < v.length; i++) v[i]! /= n;
  return v;
}
