/** Answer the agent's question (awaiting_input) or inject an instruction into a running task. */
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { errorText } from '../reasons.js';
import { api } from '../../api/client.js';
import type { Task } from '../../api/types.js';
import styles from './Detail.module.css';

const RUNNING: ReadonlySet<string> = new Set(['planning', 'executing', 'reviewing']);

/** `question`: what the agent asked (the task detail's), shown above the answer box. */
export function MessageBox({ task, question = null, onDone }: { task: Task; question?: string | null; onDone(): void }) {
  const { t, i18n } = useTranslation();
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState<{ ok: boolean; text: string } | null>(null);
  const mode = task.status === 'awaiting_input' ? 'reply' : RUNNING.has(task.status) ? 'inject' : null;
  if (!mode) return null;
  const send = async () => {
    if (!text.trim()) return;
    setBusy(true);
    try {
      await (mode === 'reply' ? api.reply(task.id, text.trim()) : api.inject(task.id, text.trim()));
      setText('');
      setNote({ ok: true, text: t(mode === 'reply' ? 'message.replied' : 'message.injected') });
      onDone();
    } catch (err) {
      setNote({ ok: false, text: errorText(t, i18n.language, err) });
    } finally {
      setBusy(false);
    }
  };
  return (
    <section className={mode === 'reply' ? styles.gate : styles.section} aria-labelledby="msg-h">
      <h3 id="msg-h">{t(mode === 'reply' ? 'message.replyTitle' : 'message.injectTitle')}</h3>
      {mode === 'reply' && question && (
        <blockquote className={styles.question} data-testid="question">
          {question}
        </blockquote>
      )}
      <label htmlFor="msg-text" className="sr-only">
        {t(mode === 'reply' ? 'message.replyLabel' : 'message.injectLabel')}
      </label>
      <textarea
        id="msg-text"
        className={styles.textarea}
        placeholder={t(mode === 'reply' ? 'message.replyLabel' : 'message.injectLabel')}
        value={text}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) void send();
        }}
      />
      <div className={styles.row}>
        <button disabled={busy || !text.trim()} onClick={() => void send()}>
          {t(mode === 'reply' ? 'message.send' : 'message.inject')}
        </button>
        {note && <span role="status" className={note.ok ? styles.ok : styles.err}>{note.text}</span>}
      </div>
    </section>
  );
}
