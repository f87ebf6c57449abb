/**
 * One action at a time from a task's panel: `busy` while it runs (its buttons off), then a note of what it did or,
 * in the person's language, why it failed. After one that worked, `onDone` reloads the task.
 */
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { Task } from '../../api/types.js';
import { errorText } from '../reasons.js';

export interface ActionNote {
  ok: boolean;
  text: string;
  /** The task the action made (a fresh version): the note links to it. */
  next?: Task;
}

export function useAction(onDone: () => void): { busy: boolean; note: ActionNote | null; run(what: () => Promise<Omit<ActionNote, 'ok'>>): Promise<void> } {
  const { t, i18n } = useTranslation();
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState<ActionNote | null>(null);
  const run = async (what: () => Promise<Omit<ActionNote, 'ok'>>) => {
    setBusy(true);
    try {
      setNote({ ok: true, ...(await what()) });
      onDone();
    } catch (err) {
      setNote({ ok: false, text: errorText(t, i18n.language, err) });
    } finally {
      setBusy(false);
    }
  };
  return { busy, note, run };
}
