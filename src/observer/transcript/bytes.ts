/**
 * Reading a tool-result line from its raw UTF-8 bytes, without decoding it or
 * JSON.parse: most of a transcript's bytes are tool results, and all the
 * cutter needs from one is its tool_use_id, is_error and a 60-char preview.
 * This is safe because an unescaped `"key":` sequence cannot occur inside a
 * JSON string (its quotes would be escaped), and UTF-8 never puts an ASCII
 * byte inside a multi-byte char, so every match below is structural.
 */
import { collapse, RESULT_PREVIEW } from './records.js';

const PREVIEW = /"content":"((?:[^"\\]|\\.){0,240})|"content":\[\{"type":"text","text":"((?:[^"\\]|\\.){0,240})/;
/** How far after `"message":` the preview is looked for (the first 64 KiB). */
const PREVIEW_SEARCH_BYTES = 64 * 1024;
/** Bytes decoded for the preview regex: its longest match (35-byte key + 240 units of ≤ 3 bytes) fits well within. */
const PREVIEW_DECODE_BYTES = 2_048;
const ascii = (s: string) => Buffer.from(s, 'latin1');
const B_TYPE_USER = ascii('"type":"user"');
const B_TYPE_TOOL_RESULT = ascii('"type":"tool_result"');
const B_TOOL_USE_ID = ascii('"tool_use_id":"');
const B_IS_ERROR_TRUE = ascii('"is_error":true');
const B_MESSAGE = ascii('"message":');
const B_CONTENT_STRING = ascii('"content":"');
const B_CONTENT_TEXT = ascii('"content":[{"type":"text","text":"');
const QUOTE = 0x22;
/** What the line splitter looks for in the dropped middle of an oversized line (index 0: is_error). */
export const OVERSIZED_WATCH: readonly Buffer[] = [B_IS_ERROR_TRUE];

/** The id of the line's one tool result, when the line is a user record holding exactly one; else null. */
export function singleToolResultId(line: Buffer): string | null {
  if (line[0] !== 0x7b || line[line.length - 1] !== 0x7d) return null;
  if (line.indexOf(B_TYPE_USER) < 0 || line.indexOf(B_TYPE_TOOL_RESULT) < 0) return null;
  const first = line.indexOf(B_TOOL_USE_ID);
  if (first < 0 || line.indexOf(B_TOOL_USE_ID, first + B_TOOL_USE_ID.length) >= 0) return null;
  const idStart = first + B_TOOL_USE_ID.length;
  const idEnd = line.indexOf(QUOTE, idStart);
  if (idEnd < 0) return null;
  const id = line.toString('utf8', idStart, idEnd);
  return id && !id.includes('\\') ? id : null;
}

/** The first tool result id in the head of an oversized line (the rest of the line was never held). */
export function toolResultIdInHead(head: Buffer): string | null {
  if (head[0] !== 0x7b || head.indexOf(B_TYPE_USER) < 0 || head.indexOf(B_TYPE_TOOL_RESULT) < 0) return null;
  const at = head.indexOf(B_TOOL_USE_ID);
  const end = at < 0 ? -1 : head.indexOf(QUOTE, at + B_TOOL_USE_ID.length);
  if (end < 0) return null;
  const id = head.toString('utf8', at + B_TOOL_USE_ID.length, end);
  return id && !id.includes('\\') ? id : null;
}

export function hasErrorFlag(line: Buffer): boolean {
  return line.indexOf(B_IS_ERROR_TRUE) >= 0;
}

/** The 60-char preview of a long tool-result line, read from a bounded window of its bytes. */
export function previewFromBytes(line: Buffer): string {
  const message = line.indexOf(B_MESSAGE);
  const window = message >= 0 ? line.subarray(message, message + PREVIEW_SEARCH_BYTES) : line;
  // The regex's leftmost match starts at the first of its two keys.
  const asString = window.indexOf(B_CONTENT_STRING);
  const asText = window.indexOf(B_CONTENT_TEXT);
  const at = asString < 0 ? asText : asText < 0 ? asString : Math.min(asString, asText);
  const m = at >= 0 ? PREVIEW.exec(window.toString('utf8', at, Math.min(window.length, at + PREVIEW_DECODE_BYTES))) : null;
  let preview = m ? (m[1] ?? m[2] ?? '') : '';
  try {
    preview = JSON.parse(`"${preview}"`) as string;
  } catch {
    // cut inside an escape sequence: keep the raw text for a label
  }
  return collapse(preview.slice(0, RESULT_PREVIEW * 4));
}
