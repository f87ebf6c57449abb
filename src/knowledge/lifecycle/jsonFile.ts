/**
 * How the lifecycle's JSON files (session.json, run.json, ledgers, promotion receipts) are read: a file that
 * is not JSON, or not the object it must hold, is CORRUPT_FILE naming it and saying what it found. A file
 * that is not JSON is named with the place it goes wrong, never with JSON.parse's message: that quotes the
 * start of the file, and the message reaches the board (a ledger someone linked to a key file would show it).
 */
import { readFileSync, statSync } from 'node:fs';
import { MaestroError } from '../../core/errors.js';
import { jsonSyntaxWhere } from '../../lib/jsonError.js';

/**
 * The most one of these files may be. They are a repository's files too (.workflow/ is committed) and a review reads
 * them whole, with JSON.parse, on the daemon's event loop: about 6 ms a MB, and the text's memory twice over. A
 * receipt of 1,000 candidates (the most a ledger holds) with their matches is a few MB.
 */
export const MAX_LIFECYCLE_JSON_BYTES = 16 * 1024 * 1024;

/** Why `file` is not read: larger than MAX_LIFECYCLE_JSON_BYTES (from its size); null otherwise. */
export function tooLargeToRead(file: string): string | null {
  const size = statSync(file).size;
  return size > MAX_LIFECYCLE_JSON_BYTES ? `${size} bytes, more than the file may be (${MAX_LIFECYCLE_JSON_BYTES}); it was not read` : null;
}

export function parseJsonFile(file: string): unknown {
  const large = tooLargeToRead(file);
  if (large) throw new MaestroError('CORRUPT_FILE', `${file}: ${large}.`, { details: { file } });
  const text = readFileSync(file, 'utf8');
  try {
    return JSON.parse(text);
  } catch {
    throw new MaestroError('CORRUPT_FILE', `${file}: not valid JSON (${jsonSyntaxWhere(text)}).`, { details: { file } });
  }
}

export function isJsonObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** A value as a message quotes it: its JSON, cut at 80 characters. */
export const quoteJson = (v: unknown): string => JSON.stringify(v).slice(0, 80);

export function readJsonObject(file: string): Record<string, unknown> {
  const v = parseJsonFile(file);
  if (!isJsonObject(v)) throw new MaestroError('CORRUPT_FILE', `${file}: must hold a JSON object, found ${quoteJson(v)}.`, { details: { file } });
  return v;
}
