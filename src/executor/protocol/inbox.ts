/**
 * inbox.json: what the daemon hands a running worker: instructions injected by
 * a human (`POST /api/tasks/:id/inject`) and replies to clarifying questions
 * (`POST /api/tasks/:id/reply`). The daemon is the only writer (whole-file,
 * atomic); the worker reads it at pipeline breakpoints and remembers in
 * stages.json which messages it has consumed, so a restart does not apply one twice.
 */
import { existsSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { stageFileAtomic, type StagedFile } from '../../lib/atomicWrite.js';
import { readJsonFile } from './files.js';

export const INBOX_FILE = 'inbox.json';

const messageSchema = z.object({
  id: z.string().min(1),
  type: z.enum(['instruction', 'reply']),
  text: z.string(),
  /** For a reply: the clarifyId of the question it answers. */
  replyTo: z.string().optional(),
  at: z.number(),
});
export type InboxMessage = z.infer<typeof messageSchema>;

const inboxSchema = z.object({ messages: z.array(messageSchema) });

export function readInbox(runDir: string): InboxMessage[] {
  const path = join(runDir, INBOX_FILE);
  if (!existsSync(path)) return [];
  const parsed = inboxSchema.safeParse(readJsonFile(path));
  if (!parsed.success) throw new Error(`${path}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  return parsed.data.messages;
}

/** Appends one message at once (read, modify, rename), for a caller standing in for the daemon (tests); the daemon stages (stageInbox). */
export function appendInbox(runDir: string, message: { type: InboxMessage['type']; text: string; replyTo?: string }): InboxMessage {
  const staged = stageInbox(runDir, message);
  staged.commit();
  return staged.entry;
}

/**
 * appendInbox in two steps: the new inbox written beside the old (where a full disk fails it, with nothing
 * changed), then put in place by `commit` once the daemon has recorded the message (a reply's status
 * change): the worker never sees an answer the task's status does not, and a failed record leaves no answer.
 */
export function stageInbox(runDir: string, message: { type: InboxMessage['type']; text: string; replyTo?: string }): StagedFile & { entry: InboxMessage } {
  const entry: InboxMessage = { id: randomUUID(), at: Date.now(), ...message };
  return { entry, ...stageFileAtomic(join(runDir, INBOX_FILE), JSON.stringify({ messages: [...readInbox(runDir), entry] }, null, 2) + '\n') };
}

/**
 * Worker side: wakes a waiting worker when the daemon writes inbox.json (an atomic rename into the
 * run directory), with `pollMs` as the fallback where the directory cannot be watched. A person's
 * reply then reaches the agent at once instead of up to one poll later.
 */
export function inboxWaiter(runDir: string): { next(pollMs: number, signal?: AbortSignal): Promise<void>; close(): void } {
  let wake: (() => void) | null = null;
  let watcher: FSWatcher | null = null;
  try {
    watcher = watch(runDir, (_event, name) => {
      if (name === null || String(name).startsWith(INBOX_FILE)) wake?.();
    });
    watcher.on('error', () => watcher?.close());
  } catch {
    watcher = null; // no watch (inotify limits, an odd file system): the poll alone
  }
  return {
    next(pollMs, signal) {
      return new Promise<void>((resolve, reject) => {
        const done = (err?: Error) => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', aborted);
          wake = null;
          if (err) reject(err);
          else resolve();
        };
        const aborted = () => done(new Error('aborted'));
        const timer = setTimeout(() => done(), pollMs);
        wake = () => done();
        if (signal?.aborted) return aborted();
        signal?.addEventListener('abort', aborted, { once: true });
      });
    },
    close: () => watcher?.close(),
  };
}
