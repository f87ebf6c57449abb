/**
 * transcript.jsonl: everything the agent said during the run, in order, for
 * replay and grep (`/api/tasks/:id/transcript`). Appended line by line like the
 * outbox; read with the same torn-line tolerance.
 */
import { join } from 'node:path';
import { appendJsonLine, readJsonLines } from './files.js';

export const TRANSCRIPT_FILE = 'transcript.jsonl';

export interface TranscriptEntry {
  at: number;
  stage: string;
  /**
   * who spoke: the agent, the worker asking for the user, or the user's reply / injected instruction; `notice`: what
   * Maestro noticed about the agent's output (lines that were not JSON); `error`: why an agent call failed (after what
   * the agent printed in it, as `agent`), one per model tried
   */
  role: 'agent' | 'prompt' | 'question' | 'reply' | 'instruction' | 'notice' | 'error';
  text: string;
}

export function appendTranscript(runDir: string, entry: TranscriptEntry): void {
  appendJsonLine(join(runDir, TRANSCRIPT_FILE), entry);
}

/** Streams in bounded memory (files.ts); a line past the limit is skipped and listed in `oversized` (line in this read, size). */
export function readTranscript(runDir: string, offset = 0): { entries: TranscriptEntry[]; nextOffset: number; oversized?: Array<{ line: number; bytes: number }> } {
  const { records, nextOffset, oversized } = readJsonLines<TranscriptEntry>(join(runDir, TRANSCRIPT_FILE), offset);
  return { entries: records, nextOffset, ...(oversized ? { oversized } : {}) };
}
