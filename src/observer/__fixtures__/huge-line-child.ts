/**
 * Child process for the huge-line benchmark: reads one transcript with the
 * current reader, or (`before`) with the splitter the reader had before, which
 * re-concatenated the whole partial line on every 1 MiB chunk. Prints the
 * time, what was found and the process's peak RSS.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { ExplorationCutter } from '../transcript/cutter.js';
import { readTranscriptFile } from '../transcript/reader.js';

const [path, mode] = process.argv.slice(2);
if (!path) throw new Error('usage: huge-line-child.ts <transcript.jsonl> [before]');

/** The old splitter, kept here only as the benchmark's baseline. */
function readBefore(file: string) {
  const cutter = new ExplorationCutter('before');
  let carry: Buffer | null = null;
  const fd = openSync(file, 'r');
  const chunk = Buffer.allocUnsafe(1 << 20);
  try {
    for (;;) {
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n <= 0) break;
      const buf = chunk.subarray(0, n);
      let start = 0;
      if (carry) {
        const nl = buf.indexOf(0x0a);
        if (nl < 0) {
          carry = Buffer.concat([carry, buf]);
          continue;
        }
        cutter.pushBytes(Buffer.concat([carry, buf.subarray(0, nl)]));
        carry = null;
        start = nl + 1;
      }
      for (let nl = buf.indexOf(0x0a, start); nl >= 0; nl = buf.indexOf(0x0a, start)) {
        cutter.pushBytes(buf.subarray(start, nl));
        start = nl + 1;
      }
      if (start < buf.length) carry = Buffer.from(buf.subarray(start));
    }
  } finally {
    closeSync(fd);
  }
  return cutter.state;
}

const t = performance.now();
const state = mode === 'before' ? readBefore(path) : readTranscriptFile(path);
const ms = performance.now() - t;
const tool = state.explorations[0]?.nodes.find((n) => n.type === 'tool');
process.stdout.write(`${JSON.stringify({ ms, toolStatus: tool?.status ?? null, issues: state.issues, maxRssBytes: process.resourceUsage().maxRSS * 1024 })}\n`);
