/**
 * A tiny, valid ONNX model written by hand (protobuf wire format, no
 * library), so the local-embedder tests run a real ONNX runtime without
 * downloading a model: inputs `input_ids` and `attention_mask` ([batch, seq],
 * int64) → `Gather` from an embedding table initializer → `last_hidden_state`
 * ([batch, seq, dim], float). Plus a matching BERT `vocab.txt`.
 */

function varint(n: number | bigint): number[] {
  let v = BigInt(n);
  if (v < 0n) v += 1n << 64n;
  const out: number[] = [];
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) b |= 0x80;
    out.push(b);
  } while (v > 0n);
  return out;
}

const key = (field: number, wire: number) => varint((field << 3) | wire);
const int = (field: number, v: number | bigint) => [...key(field, 0), ...varint(v)];
function bytes(field: number, b: Uint8Array | number[]): number[] {
  return [...key(field, 2), ...varint(b.length), ...b];
}
const str = (field: number, s: string) => bytes(field, [...Buffer.from(s, 'utf8')]);

function valueInfo(name: string, elemType: number, dims: Array<number | string>): number[] {
  const shape = dims.flatMap((d) => bytes(1, typeof d === 'number' ? int(1, d) : str(2, d)));
  const tensorType = [...int(1, elemType), ...bytes(2, shape)];
  return [...str(1, name), ...bytes(2, bytes(1, tensorType))];
}

const FLOAT = 1;
const INT64 = 7;

/** The model bytes for an embedding table `table[tokenId] = vector`. */
export function gatherEmbeddingModel(table: number[][]): Uint8Array {
  const dim = table[0]!.length;
  const raw = Buffer.alloc(table.length * dim * 4);
  table.forEach((row, i) => row.forEach((x, j) => raw.writeFloatLE(x, (i * dim + j) * 4)));
  const initializer = [...int(1, table.length), ...int(1, dim), ...int(2, FLOAT), ...str(8, 'embeddings'), ...bytes(9, [...raw])];
  const node = [...str(1, 'embeddings'), ...str(1, 'input_ids'), ...str(2, 'last_hidden_state'), ...str(3, 'gather'), ...str(4, 'Gather'), ...bytes(5, [...str(1, 'axis'), ...int(3, 0), ...int(20, 2)])];
  const graph = [
    ...bytes(1, node),
    ...str(2, 'tiny-embedder'),
    ...bytes(5, initializer),
    ...bytes(11, valueInfo('input_ids', INT64, ['batch', 'seq'])),
    ...bytes(11, valueInfo('attention_mask', INT64, ['batch', 'seq'])),
    ...bytes(12, valueInfo('last_hidden_state', FLOAT, ['batch', 'seq', dim])),
  ];
  const model = [...int(1, 8), ...str(2, 'maestro-test'), ...bytes(7, graph), ...bytes(8, [...str(1, ''), ...int(2, 13)])];
  return Uint8Array.from(model);
}

export const SPECIAL_TOKENS = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];
