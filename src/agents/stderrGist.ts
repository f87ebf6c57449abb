/**
 * What a failed agent command's stderr says, in one bounded line for its AGENT_FAILED message (task show, run show,
 * the run.phase events). Its last three lines alone were often no help: a Node script that throws ends with its
 * error's properties and the Node version ("}  Node.js v20.20.2"), the error itself a dozen lines up. So the gist
 * is the last line that reads as an error (Node's `Error: ENOENT: …`, Python's `ValueError: …`, Java's
 * `…Exception: …`, Go's `panic: …`, a Rust or C tool's `error: …`, Rust's `thread 'main' panicked at …`), then the
 * last lines, each cut to LINE_CHARS, colour codes dropped and control characters shown (lib/visible.ts).
 * The last such line, not the first: an agent's own log lines before its crash ("error: rate limited, retrying")
 * read as errors too, and Python's final exception is the one that ended it.
 */
import { visible } from '../lib/visible.js';

/** How much of one line the gist keeps: a minified bundle's line can run to megabytes. */
const LINE_CHARS = 300;
/** The lines of the end kept, as before. */
const TAIL_LINES = 3;

/** Unindented (a stack frame or a quoted source line is indented): a class named …Error, …Exception or …Rejection, or a tool's `error:`. */
const ERROR_LINE = /^(?:Uncaught )?\[?[\w.$]*(?:Error|Exception|Rejection)\b|^(?:error|fatal|panic)(?:\[\w+\])?:|^thread '.*' panicked/i;

/** Colour and style sequences (SGR), which a tool writing to a terminal puts around "error:". */
const SGR = /\u001b\[[0-9;:]*m/g;

export function stderrGist(stderr: string): string {
  const lines = stderr
    .replace(SGR, '')
    .split(/\r?\n/)
    .filter((line) => line.trim());
  const tail = lines.slice(-TAIL_LINES).map(cut).join(' | ');
  // Before the tail, unless it is in it.
  const errorAt = lines.findLastIndex((line) => ERROR_LINE.test(line));
  return visible(errorAt < 0 || errorAt >= lines.length - TAIL_LINES ? tail : `${cut(lines[errorAt]!)} … ${tail}`);
}

/** The line without its indentation, cut to LINE_CHARS. */
function cut(line: string): string {
  const text = line.trim();
  return text.length > LINE_CHARS ? `${text.slice(0, LINE_CHARS - 1)}…` : text;
}
