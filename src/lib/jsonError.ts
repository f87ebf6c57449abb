/**
 * Where JSON text that does not parse goes wrong, as `line L, column C` (1-based), and nothing of the text
 * itself. JSON.parse's own message quotes the start of the text (`Unexpected token 'T', "TOPSECRET" is not
 * valid JSON`), and the file may be one a link sent us to; Node 20 gives no position for that message either,
 * so the place is found by scanning the text against the grammar (RFC 8259).
 */
export function jsonSyntaxWhere(text: string): string {
  const at = jsonErrorOffset(text);
  if (at === null) return 'not valid JSON';
  const before = text.slice(0, at);
  const line = before.split('\n').length;
  const column = at - (before.lastIndexOf('\n') + 1) + 1;
  return at === text.length ? `it ends early, at line ${line}, column ${column}` : `line ${line}, column ${column}`;
}

/** The message for a file (or other named text) that is not JSON: its name and the place, never its text. */
export function notJsonMessage(what: string, text: string): string {
  return `${what} is not valid JSON (${jsonSyntaxWhere(text)}).`;
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const ESCAPES = '"\\/bfnrt';
const HEX4 = /[0-9a-fA-F]{4}/y;

/**
 * A string starting at `start` (on its `"`): the offset past its closing quote, or minus the offset of the
 * character that breaks it (an end is past an opening quote, so never 0: the sign tells them apart).
 */
function stringEnd(text: string, start: number): number {
  if (text[start] !== '"') return -start;
  let i = start + 1;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') return i + 1;
    if (c < ' ') return -i;
    if (c !== '\\') {
      i++;
      continue;
    }
    const escaped = text[i + 1] ?? '';
    if (escaped === '' || (escaped !== 'u' && !ESCAPES.includes(escaped))) return -(i + 1);
    HEX4.lastIndex = i + 2;
    if (escaped === 'u' && !HEX4.test(text)) return -(i + 2);
    i += escaped === 'u' ? 6 : 2;
  }
  return -i;
}

/**
 * The offset of the first character that breaks the JSON grammar (`text.length` when the text ends before
 * its value does), or null when it is valid. Iterative, with its own stack: a file of 100,000 `[` must not
 * overflow ours.
 */
export function jsonErrorOffset(text: string): number | null {
  let i = 0;
  const closers: string[] = [];
  const space = () => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  // Each reader below moves `i` past what it accepts, or leaves it on the character it refuses.
  const string = (): boolean => {
    const end = stringEnd(text, i);
    i = Math.abs(end);
    return end > 0;
  };
  const key = (): boolean => {
    space();
    if (!string()) return false;
    space();
    if (text[i] !== ':') return false;
    i++;
    return true;
  };
  const scalar = (): boolean => {
    if (text[i] === '"') return string();
    const word = ['true', 'false', 'null'].find((w) => text.startsWith(w, i));
    if (word) {
      i += word.length;
      return true;
    }
    NUMBER.lastIndex = i;
    if (!NUMBER.test(text)) return false;
    i = NUMBER.lastIndex;
    return true;
  };
  for (;;) {
    // A value is expected here.
    space();
    if (text[i] === '{' || text[i] === '[') {
      const close = text[i] === '{' ? '}' : ']';
      i++;
      space();
      if (text[i] !== close) {
        closers.push(close);
        if (close === '}' && !key()) return i;
        continue;
      }
      i++;
    } else if (!scalar()) return i;
    // After a value: a comma, a closer, or the end.
    for (;;) {
      space();
      const close = closers.at(-1);
      if (close === undefined) return i === text.length ? null : i;
      if (text[i] === close) {
        closers.pop();
        i++;
      } else if (text[i] === ',') {
        i++;
        if (close === '}' && !key()) return i;
        break;
      } else return i;
    }
  }
}
