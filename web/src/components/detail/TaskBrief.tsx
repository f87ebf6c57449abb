/**
 * What was asked, said before the evidence: the task's specification and the feedback this version carries (who
 * rejected the version before it, at which gate, when, and why, with the line comments). A reviewer met them below
 * hundreds of diff lines and read the whole change before learning what it was for and what was wrong last time.
 * Compact: a specification past SPEC_LINES lines (or SPEC_CHARS characters of long lines) is folded behind "Show all".
 */
import { useState, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import type { TFunction } from 'i18next';
import type { Task } from '../../api/types.js';
import { oneLine, visible } from '../hiddenChars.js';
import { translateReason } from '../reasons.js';
import styles from './Detail.module.css';

/** Lines of a specification shown before "Show all": enough for a short one whole, little enough to keep the diff on screen. */
export const SPEC_LINES = 4;
const SPEC_CHARS = 400;

/** `feedbackAt`: when the rejection this version carries was made (the task detail's), said beside who made it. */
export function TaskBrief({ task, baseBranch, feedbackAt }: { task: Task; baseBranch: string; feedbackAt: number | null }) {
  const { t, i18n } = useTranslation();
  const feedback = task.feedbackSource || task.feedback;
  if (!task.spec && !feedback) return null;
  return (
    <section className={styles.section} aria-labelledby="brief-h" data-testid="brief">
      <h3 id="brief-h">{t('brief.title')}</h3>
      {task.spec && <Spec spec={task.spec} />}
      {feedback && (
        <div className={styles.feedback} data-testid="brief-feedback">
          <h4 className={styles.briefLabel}>{t('brief.feedback', { version: task.version - 1 })}</h4>
          <Feedback t={t} task={task} baseBranch={baseBranch} when={feedbackAt === null ? null : new Date(feedbackAt).toLocaleString(i18n.language)} />
        </div>
      )}
    </section>
  );
}

function Spec({ spec }: { spec: string }) {
  const { t } = useTranslation();
  const [open, setOpen] = useState(false);
  const lines = spec.split('\n').length;
  const long = lines > SPEC_LINES || spec.length > SPEC_CHARS;
  return (
    <>
      <pre aria-label={t('detail.spec')} className={long && !open ? styles.folded : styles.spec} data-testid="brief-spec">
        {visible(spec)}
      </pre>
      {long && (
        <button className={styles.link} aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? t('brief.showLess') : t('brief.showAll', { count: lines })}
        </button>
      )}
    </>
  );
}

/**
 * The feedback a version carries, said in the board's language from its data (feedbackSource): who rejected it at
 * which gate, when (`when`, once known) and why, with the line comments; or who ran it again from the base branch after
 * it stopped (`baseBranch`, the task detail's: the source records none, so a version made before the project's base
 * branch changed names the current one). The server's English text (`feedback`, what the agent reads) only for a
 * version made before the data was kept.
 */
export function Feedback({ t, task, baseBranch, when = null }: { t: TFunction; task: Task; baseBranch: string; when?: string | null }): ReactNode {
  const source = task.feedbackSource;
  if (!source) return <p>{task.feedback}</p>;
  if (source.kind === 'fresh') {
    const named = { version: source.version, who: source.who, base: oneLine(baseBranch) };
    return <p>{source.error ? t('feedbackFrom.freshError', { ...named, error: translateReason(t, source.error) }) : t('feedbackFrom.fresh', named)}</p>;
  }
  const rejected = { gate: t(`status.${source.gate}`), who: source.who, reason: source.reason };
  return (
    <>
      <p>{when ? t('feedbackFrom.rejectedWhen', { ...rejected, when }) : t('feedbackFrom.rejected', rejected)}</p>
      {source.comments.length > 0 && (
        <>
          <p>{t('feedbackFrom.comments')}</p>
          <ul className={styles.plainList}>
            {source.comments.map((c, i) => (
              <li key={i}>{t(c.side === 'old' ? 'feedbackFrom.commentOld' : 'feedbackFrom.comment', { file: c.file, line: c.line, text: c.text })}</li>
            ))}
          </ul>
        </>
      )}
    </>
  );
}
