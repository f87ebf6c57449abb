/**
 * inbox.json: what the daemon hands a running worker: instructions injected by
 * a human (`POST /api/tasks/:id/inject`) and replies to clarifying questions
 * (`POST /api/tasks/:id/reply`). The daemon is the only writer (whole-file,
 * atomic); the worker reads it at pipeline breakpoints and remembers in
 * stages.json which messages it has consumed, so a restart does not apply one twice.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { readJsonFile, writeJsonAtomic } from './files.js';

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

/** Daemon side: appends one message. Single writer, so read-modify-rename is enough. */
export function appendInbox(runDir: string, message: { type: InboxMessage['type']; text: string; replyTo?: string }): InboxMessage {
  const entry: InboxMessage = { id: randomUUID(), at: Date.now(), ...message };
  writeJsonAtomic(join(runDir, INBOX_FILE), { messages: [...readInbox(runDir), entry] });
  return entry;
}
