/**
 * One changed file: its header, then react-diff-view's table (unified or
 * split) with the reviewers' findings and the person's comments pinned under
 * their lines as widgets. A line number is a button that opens a comment box
 * under that line. Large files arrive collapsed (no hunks) and load whole on
 * request; binary files and files too large even then show a placeholder.
 */
import { memo, useEffect, useMemo, useRef, useState, type ReactElement, type ReactNode, type RefObject } from 'react';
import { useTranslation } from 'react-i18next';
import type { TFunction } from 'i18next';
import { Decoration, Diff, Hunk, type ChangeData, type GutterOptions, type HunkData, type HunkTokens, type ViewType } from 'react-diff-view';
import type { DiffFile, Finding, LineComment } from '../../api/types.js';
import { changeKey, holdsHidden, languageOf, lineOf, modeKind, noNewlineKeys, pinToLines, toHunks, type Pinned } from './diffModel.js';
import { oneLine, visible } from '../hiddenChars.js';
import { tokensFor } from './highlight.js';
import styles from './Review.module.css';

/**
 * The first files are drawn at once; the others when they come within a
 * screen or two of the viewport (and stay drawn). A 200-file diff then
 * costs its first screen, not 5,000 rows and their highlighting up front:
 * measured in bench:web (the diff view of 5,000 lines over 200 files).
 */
const EAGER_FILES = 2;
const NEAR = '600px 0px';

/** Drawn yet? Always, where the browser cannot tell what is on screen (tests' jsdom). */
function useSeen(index: number): [boolean, RefObject<HTMLElement | null>] {
  const ref = useRef<HTMLElement>(null);
  const [seen, setSeen] = useState(() => index < EAGER_FILES || typeof IntersectionObserver === 'undefined');
  useEffect(() => {
    const el = ref.current;
    if (seen || !el) return;
    const io = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) setSeen(true);
    }, { rootMargin: NEAR });
    io.observe(el);
    return () => io.disconnect();
  }, [seen]);
  return [seen, ref];
}

/**
 * Highlighting comes a frame after the lines: the diff is drawn plain first
 * (the reader can start at once), then coloured. Tokenising is the larger part
 * of a file's cost (refractor over every line of both sides).
 */
function useHighlight(seen: boolean, hunks: HunkData[], path: string): HunkTokens | null {
  const [tokens, setTokens] = useState<HunkTokens | null>(null);
  useEffect(() => {
    if (!seen) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const frame = requestAnimationFrame(() => {
      timer = setTimeout(() => setTokens(tokensFor(hunks, languageOf(path))), 0);
    });
    return () => {
      cancelAnimationFrame(frame);
      clearTimeout(timer);
    };
  }, [seen, hunks, path]);
  return tokens;
}

const DIFF_TYPE = { added: 'add', deleted: 'delete', modified: 'modify', renamed: 'rename', copied: 'copy', type_changed: 'modify' } as const;

export interface FileDiffProps {
  file: DiffFile;
  index: number;
  viewType: ViewType;
  current: boolean;
  /** Line numbers are comment buttons. */
  commentable: boolean;
  comments: LineComment[];
  findings: Finding[];
  /** Set while the whole file is being fetched. */
  loading: boolean;
  /** The whole file was asked for and came back collapsed still: too large to show. */
  triedWhole: boolean;
  /** The change's commits (base, head): a file too large to show says the git command that shows it. */
  range: { base: string; head: string };
  onLoadWhole(path: string): void;
  onAdd(comment: LineComment): void;
  onRemove(index: number): void;
}

/**
 * What the lines do not show: a mode that changed (a file made executable), a new file's unusual mode, a
 * symlink (its one line is the path it points to, not content), one pointing outside the repository (the daemon
 * judges it from the link's folder, never following it). A mode-only change has no lines at all.
 */
function FileNotes({ file }: { file: DiffFile }) {
  const { t } = useTranslation();
  const from = modeKind(file.oldMode);
  const to = modeKind(file.newMode);
  const kind = (k: string, mode: string | null) => t(`review.modeKind.${k}`, { mode });
  const notes: string[] = [];
  if (from && to && file.oldMode !== file.newMode) notes.push(t('review.modeChanged', { from: kind(from, file.oldMode), to: kind(to, file.newMode) }));
  else if (!from && to && to !== 'file') notes.push(t('review.modeNew', { kind: kind(to, file.newMode) }));
  if (to === 'symlink' || (!to && from === 'symlink')) notes.push(t('review.symlink'));
  if (file.link?.outside) notes.push(t('review.symlinkOutside'));
  if (file.gitBinary) notes.push(t(`review.gitBinary.${file.gitBinary}`));
  if (holdsHidden(file)) notes.push(t('review.hiddenChars'));
  return (
    <>
      {notes.map((n) => (
        <p key={n} className={styles.note} data-testid="file-note">
          {n}
        </p>
      ))}
    </>
  );
}

const shellQuote = (s: string) => (/^[\w./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
/**
 * A name as a shell word. A name that is not UTF-8 comes as git quotes it ("n\377.txt"): bash's $'…' reads the
 * same escapes, so the command names that file, not one called with the quotes and backslash.
 */
const shellWord = (s: string) => (/^".*\\.*"$/s.test(s) ? `$'${s.slice(1, -1).replace(/'/g, "\\'")}'` : shellQuote(s));
/** The command that prints one file's change (quoted for a POSIX shell; bash for a name that is not UTF-8). */
export const gitDiffCommand = (range: { base: string; head: string }, path: string) => `git diff ${range.base.slice(0, 12)} ${range.head.slice(0, 12)} -- ${shellWord(path)}`;

/** A file whose lines are not drawn: binary, collapsed (load it whole, or the git command when too large), empty or unchanged. */
function NoLines({ file, loading, triedWhole, range, onLoadWhole }: Pick<FileDiffProps, 'file' | 'loading' | 'triedWhole' | 'range' | 'onLoadWhole'>) {
  const { t } = useTranslation();
  if (file.binary) return <p className={styles.placeholder}>{t('review.binary')}</p>;
  if (!file.collapsed) return <p className={styles.placeholder}>{t(file.status === 'added' || file.status === 'deleted' ? 'review.empty' : 'review.noContent')}</p>;
  return (
    <p className={styles.placeholder}>
      {loading ? t('app.loading') : triedWhole ? t('review.tooLarge', { command: gitDiffCommand(range, file.path) }) : t('review.collapsed', { count: file.additions + file.deletions })}{' '}
      {!loading && !triedWhole && (
        <button type="button" onClick={() => onLoadWhole(file.path)} aria-label={t('review.loadWholeOf', { file: file.path })}>
          {t('review.loadWhole')}
        </button>
      )}
    </p>
  );
}

/** The box a line comment is written in: Ctrl/Cmd+Enter adds it, Escape closes the box (only the box, not the task behind it). */
function CommentEditor({ id, label, draft, onDraft, onSave, onCancel }: { id: string; label: string; draft: string; onDraft(text: string): void; onSave(): void; onCancel(): void }) {
  const { t } = useTranslation();
  return (
    <div className={styles.editor}>
      <label htmlFor={id}>{label}</label>
      <textarea
        id={id}
        autoFocus
        className={styles.textarea}
        value={draft}
        maxLength={10_000}
        onChange={(e) => onDraft(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) onSave();
          if (e.key === 'Escape') {
            e.stopPropagation();
            onCancel();
          }
        }}
      />
      <div className={styles.row}>
        <button type="button" onClick={onSave} disabled={!draft.trim()}>
          {t('review.addComment')}
        </button>
        <button type="button" onClick={onCancel}>
          {t('review.discardComment')}
        </button>
      </div>
    </div>
  );
}

/**
 * A line number: on the side a comment names (new for added and context lines, old for deleted ones) it is
 * a button that opens a comment box, unless `onOpen` is null (read-only). Only colour tells an added or
 * removed line from an unchanged one, so a screen reader is told in words.
 */
function gutter(t: TFunction, path: string, onOpen: ((change: ChangeData) => void) | null) {
  return function renderGutter({ change, side, renderDefault }: GutterOptions): ReactNode {
    const n = renderDefault();
    if (n === undefined || n === null) return null;
    const onSide = change.type === 'delete' ? side === 'old' : side === 'new';
    if (!onSide) return n;
    if (!onOpen) return change.type === 'normal' ? n : <>{n}<span className="sr-only"> {t(change.type === 'insert' ? 'review.srAdded' : 'review.srRemoved')}</span></>;
    const label = change.type === 'delete' ? 'review.commentOnOld' : change.type === 'insert' ? 'review.commentOnAdded' : 'review.commentOn';
    return (
      <button type="button" className={styles.lineButton} aria-label={t(label, { file: path, line: n })} onClick={() => onOpen(change)}>
        {n}
      </button>
    );
  };
}

/**
 * What is pinned under a line: that the file ends there without a newline, the reviewers' findings on it, the
 * person's comments (each with its remove button), then `children` (the comment box, when open there).
 */
function LineWidget({ noNewline, pinned, onRemove, children }: { noNewline: boolean; pinned: Pinned; onRemove(index: number): void; children: ReactNode }) {
  const { t } = useTranslation();
  return (
    <div className={styles.widget}>
      {noNewline && <p className={styles.note} data-testid="no-newline">{t('review.noNewline')}</p>}
      {pinned.findings.map((f, i) => (
        <p key={`f${i}`} className={styles.finding} data-testid="line-finding">
          <span className={styles.severity}>{t(`severity.${f.severity}`, { defaultValue: f.severity })}</span> {t('review.byReviewer', { reviewer: t(`reviewer.${f.reviewer}`, { defaultValue: f.reviewer }) })}: {visible(f.message)}
        </p>
      ))}
      {pinned.comments.map(({ comment, index: i }) => (
        <div key={`c${i}`} className={styles.comment} data-testid="line-comment">
          <span>{comment.text}</span>
          <button type="button" onClick={() => onRemove(i)} aria-label={t('review.removeComment', { file: comment.file, line: comment.line })}>
            {t('review.remove')}
          </button>
        </div>
      ))}
      {children}
    </div>
  );
}

function renderHunks(hunks: HunkData[]): ReactElement[] {
  return hunks.flatMap((h) => [
    <Decoration key={`d${h.oldStart},${h.newStart}`}>
      <span className={styles.hunkHeader}>{h.content}</span>
    </Decoration>,
    <Hunk key={`h${h.oldStart},${h.newStart}`} hunk={h} />,
  ]);
}

export const FileDiff = memo(function FileDiff({ file, index, viewType, current, commentable, comments, findings, loading, triedWhole, range, onLoadWhole, onAdd, onRemove }: FileDiffProps) {
  const { t } = useTranslation();
  const [editing, setEditing] = useState<{ key: string; line: number; side: 'new' | 'old' } | null>(null);
  const [draft, setDraft] = useState('');
  const [seen, ref] = useSeen(index);
  const hunks = useMemo(() => toHunks(file.hunks), [file.hunks]);
  const tokens = useHighlight(seen, hunks, file.path);
  const { byKey, loose } = useMemo(() => pinToLines(file.path, hunks, comments, findings), [file.path, hunks, comments, findings]);

  const open = (change: ChangeData) => {
    const { line, side } = lineOf(change);
    setEditing({ key: changeKey(change), line, side });
    setDraft('');
  };
  const save = () => {
    if (!editing || !draft.trim()) return;
    onAdd({ file: file.path, line: editing.line, side: editing.side, text: draft.trim() });
    setEditing(null);
    setDraft('');
  };

  const renderGutter = gutter(t, file.path, commentable ? open : null);

  const widgets: Record<string, ReactNode> = {};
  const endsBare = new Set(noNewlineKeys(file.collapsed ? [] : file.hunks));
  const keys = new Set([...endsBare, ...byKey.keys(), ...(editing ? [editing.key] : [])]);
  for (const key of keys) {
    widgets[key] = (
      <LineWidget noNewline={endsBare.has(key)} pinned={byKey.get(key) ?? { comments: [], findings: [] }} onRemove={onRemove}>
        {editing?.key === key && <CommentEditor id={`cm-${index}-${key}`} label={t(editing.side === 'old' ? 'review.commentLabelOld' : 'review.commentLabel', { file: file.path, line: editing.line })} draft={draft} onDraft={setDraft} onSave={save} onCancel={() => setEditing(null)} />}
      </LineWidget>
    );
  }

  const name = oneLine(file.oldPath && file.oldPath !== file.path ? `${file.oldPath} → ${file.path}` : file.path);
  return (
    <section ref={ref} className={`${styles.file} ${current ? styles.currentFile : ''}`} data-file={file.path} data-file-index={index} aria-label={file.path}>
      <header className={styles.fileHead}>
        <span className={`${styles.badge} ${styles[file.status] ?? ''}`}>{t(`fileStatus.${file.status}`)}</span>
        <span className={styles.path}>{name}</span>
        <span className={styles.stat}>
          <span className={styles.add}>+{file.additions}</span> <span className={styles.del}>−{file.deletions}</span>
        </span>
      </header>
      <FileNotes file={file} />
      {loose.map((f, i) => (
        <p key={i} className={styles.finding} data-testid="file-finding">
          <span className={styles.severity}>{t(`severity.${f.severity}`, { defaultValue: f.severity })}</span> {f.line ? `${t('review.line', { line: f.line })} · ` : ''}
          {visible(f.message)}
        </p>
      ))}
      {/* A type change with one binary side (a picture replaced by a link): the other side's lines are drawn. */}
      {file.binary && !file.collapsed && hunks.length > 0 && <p className={styles.placeholder}>{t('review.binarySide')}</p>}
      {file.collapsed || hunks.length === 0 ? (
        <NoLines file={file} loading={loading} triedWhole={triedWhole} range={range} onLoadWhole={onLoadWhole} />
      ) : !seen ? (
        // Room for the lines to come, so the scroll bar and the file positions hold.
        <div className={styles.pending} style={{ height: Math.min(hunks.reduce((n, h) => n + h.changes.length + 1, 0), 3000) * 18 }} />
      ) : (
        <Diff viewType={viewType} diffType={DIFF_TYPE[file.status]} hunks={hunks} tokens={tokens} widgets={widgets} renderGutter={renderGutter} className={styles.table}>
          {renderHunks}
        </Diff>
      )}
    </section>
  );
});
