/**
 * The diff of one task version: the file tree on the left, every file's diff
 * on the right, unified or split (remembered), with line comments and the
 * reviewers' findings (one on a file the change does not touch is listed above
 * the files: pinned nowhere, it would be counted beside its reviewer and shown
 * nowhere). Keys (not while typing): j / n next file, k / p previous file.
 *
 * The diff component is react-diff-view 3.3.3 (see ReviewPanel.tsx for why);
 * this file only fetches, lays out and moves between files.
 */
import { useCallback, useEffect, useMemo, useRef, useState, type Dispatch, type SetStateAction } from 'react';
import { useTranslation } from 'react-i18next';
import { errorText } from '../reasons.js';
import { oneLine, visible } from '../hiddenChars.js';
import type { ViewType } from 'react-diff-view';
import { api } from '../../api/client.js';
import type { DiffFile, DiffResponse, Finding, LineComment } from '../../api/types.js';
import { useComments, useReview } from '../../stores/review.js';
import { isShortcut } from '../keys.js';
import { fileTree } from './diffModel.js';
import { FileDiff } from './FileDiff.js';
import { FileTree } from './FileTree.js';
import styles from './Review.module.css';

const VIEW_KEY = 'maestro.diffView';
const NO_FINDINGS: Finding[] = [];

function rememberedView(): ViewType {
  try {
    return localStorage.getItem(VIEW_KEY) === 'split' ? 'split' : 'unified';
  } catch {
    return 'unified';
  }
}

export interface DiffViewerProps {
  /** The task the comments belong to (the version being reviewed). */
  taskId: string;
  /** Another version of the chain to show (the route's `?version=`). */
  version?: number;
  /** No line comments: an older version is shown, and a reject only speaks for the current one. */
  readOnly?: boolean;
  findings: Finding[];
  /** For tests and the benchmark: a diff already in hand instead of a request. */
  initial?: DiffResponse;
  /** Fetched again when this changes (the task's status): a conflict run at merge time moves the branch. */
  refreshKey?: string;
}

/**
 * The diff of the version shown, fetched again when `refreshKey` changes or the review store asks (an approval
 * refused as stale). The head of the task's own version's diff is recorded in the store: an approval names it.
 */
function useTaskDiff(taskId: string, version: number | undefined, initial: DiffResponse | undefined, refreshKey: string | undefined) {
  const { t, i18n } = useTranslation();
  const [diff, setDiff] = useState<DiffResponse | null>(initial ?? null);
  const [error, setError] = useState<string | null>(null);
  const [whole, setWhole] = useState<Record<string, DiffFile>>({});
  const reload = useReview((s) => s.reloads[taskId] ?? 0);
  // Another version is blanked while it loads; the same one fetched again stays on screen until replaced.
  const shownKey = useRef('');
  useEffect(() => {
    if (initial) return;
    let live = true;
    if (shownKey.current !== `${taskId}:${version}`) setDiff(null);
    shownKey.current = `${taskId}:${version}`;
    setError(null);
    api.diff(taskId, { version }).then(
      (d) => {
        if (!live) return;
        setDiff(d);
        setWhole({});
        // An older version's commit is not what the gate decides on.
        if (version === undefined) useReview.getState().setShown(taskId, d.head, { branch: d.branch, ...d.totals });
      },
      (err: Error) => live && setError(errorText(t, i18n.language, err)),
    );
    return () => {
      live = false;
    };
  }, [taskId, version, initial, refreshKey, reload]);
  return { diff, error, whole, setWhole };
}

/** Unified or split, remembered for the next diff (in this page alone where storage is refused). */
function useViewType(): [ViewType, (v: ViewType) => void] {
  const [viewType, setViewType] = useState<ViewType>(rememberedView);
  const changeView = (v: ViewType) => {
    setViewType(v);
    try {
      localStorage.setItem(VIEW_KEY, v);
    } catch {
      /* this page only */
    }
  };
  return [viewType, changeView];
}

/** The file the reader is on, picked in the tree or with the keys (j / n next, k / p previous), scrolled to. */
function useCurrentFile(files: DiffFile[]) {
  const [current, setCurrent] = useState(0);
  const pick = useCallback(
    (i: number) => {
      if (!files.length) return;
      const next = Math.max(0, Math.min(files.length - 1, i));
      setCurrent(next);
      const el = document.querySelector(`[data-file-index="${next}"]`);
      (el as HTMLElement | null)?.scrollIntoView?.({ block: 'start' });
    },
    [files],
  );

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (!isShortcut(e)) return;
      if (e.key === 'j' || e.key === 'n') pick(current + 1);
      else if (e.key === 'k' || e.key === 'p') pick(current - 1);
      else return;
      e.preventDefault();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [pick, current]);
  return { current, pick };
}

/** A collapsed file fetched whole on request, into `setWhole`: the one loading, and why the last try failed. */
function useLoadWhole(taskId: string, version: number | undefined, setWhole: Dispatch<SetStateAction<Record<string, DiffFile>>>) {
  const { t, i18n } = useTranslation();
  const [loadingFile, setLoadingFile] = useState<string | null>(null);
  const [fileError, setFileError] = useState<string | null>(null);
  const loadWhole = useCallback(
    async (path: string) => {
      setLoadingFile(path);
      setFileError(null);
      try {
        const d = await api.diff(taskId, { version, file: path });
        const f = d.files.find((x) => x.path === path);
        if (f) setWhole((w) => ({ ...w, [path]: f }));
      } catch (err) {
        setFileError(errorText(t, i18n.language, err));
      } finally {
        setLoadingFile(null);
      }
    },
    [taskId, version],
  );
  return { loadingFile, fileError, loadWhole };
}

export function DiffViewer({ taskId, version, readOnly = false, findings, initial, refreshKey }: DiffViewerProps) {
  const { t } = useTranslation();
  const { diff, error, whole, setWhole } = useTaskDiff(taskId, version, initial, refreshKey);
  const [viewType, changeView] = useViewType();
  const { loadingFile, fileError, loadWhole } = useLoadWhole(taskId, version, setWhole);
  const comments = useComments(taskId);

  const files = useMemo(() => (diff ? diff.files.map((f) => whole[f.path] ?? f) : []), [diff, whole]);
  const { current, pick } = useCurrentFile(files);
  const tree = useMemo(() => fileTree(files), [files]);
  const findingsByFile = useMemo(() => {
    const m: Record<string, Finding[]> = {};
    for (const f of findings) if (f.file) (m[f.file] ??= []).push(f);
    return m;
  }, [findings]);
  const elsewhere = useMemo(() => {
    const shown = new Set(files.map((f) => f.path));
    return findings.filter((f) => f.file && !shown.has(f.file));
  }, [findings, files]);
  const commentsByFile = useMemo(() => {
    const m: Record<string, number> = {};
    for (const c of comments) m[c.file] = (m[c.file] ?? 0) + 1;
    return m;
  }, [comments]);
  const add = useCallback((c: LineComment) => useReview.getState().add(taskId, c), [taskId]);
  const remove = useCallback((i: number) => useReview.getState().remove(taskId, i), [taskId]);

  if (error) return <p role="alert" className={styles.err}>{t('review.diffFailed', { message: error })}</p>;
  if (!diff) return <p className={styles.muted}>{t('app.loading')}</p>;
  return (
    <div className={styles.viewer} data-testid="diff-viewer">
      <DiffToolbar totals={diff.totals} viewType={viewType} onView={changeView} />
      {fileError && <p role="alert" className={styles.err}>{fileError}</p>}
      <FindingsElsewhere findings={elsewhere} />
      {files.length === 0 ? (
        <p className={styles.muted}>{t('review.noFiles')}</p>
      ) : (
        <div className={styles.split}>
          <FileTree tree={tree} files={files} current={current} commentsByFile={commentsByFile} onPick={pick} />
          <div className={styles.files}>
            {files.map((f, i) => (
              <FileDiff
                key={f.path}
                file={f}
                index={i}
                viewType={viewType}
                current={i === current}
                commentable={!readOnly}
                comments={!readOnly && commentsByFile[f.path] ? comments : NO_COMMENTS}
                findings={findingsByFile[f.path] ?? NO_FINDINGS}
                loading={loadingFile === f.path}
                triedWhole={!!whole[f.path]}
                range={diff}
                onLoadWhole={loadWhole}
                onAdd={add}
                onRemove={remove}
              />
            ))}
          </div>
        </div>
      )}
    </div>
  );
}

/** The reviewers' findings on files the change does not touch, with the file and line each names. */
function FindingsElsewhere({ findings }: { findings: Finding[] }) {
  const { t } = useTranslation();
  if (!findings.length) return null;
  return (
    <div data-testid="findings-elsewhere">
      <p className={styles.muted}>{t('review.findingsElsewhere')}</p>
      {findings.map((f, i) => (
        <p key={i} className={styles.finding}>
          <span className={styles.severity}>{t(`severity.${f.severity}`, { defaultValue: f.severity })}</span> {t('review.byReviewer', { reviewer: t(`reviewer.${f.reviewer}`, { defaultValue: f.reviewer }) })},{' '}
          <code>{oneLine(f.file!)}{f.line ? `:${f.line}` : ''}</code>: {visible(f.message)}
        </p>
      ))}
    </div>
  );
}

/** The change's totals, the unified / split switch and the keys. */
function DiffToolbar({ totals, viewType, onView }: { totals: DiffResponse['totals']; viewType: ViewType; onView(v: ViewType): void }) {
  const { t } = useTranslation();
  return (
    <div className={styles.toolbar}>
      <span data-testid="diff-totals">
        {t('review.totals', { count: totals.files })} <span className={styles.add}>+{totals.additions}</span> <span className={styles.del}>−{totals.deletions}</span>
      </span>
      <span role="group" aria-label={t('review.view')} className={styles.row}>
        {(['unified', 'split'] as const).map((v) => (
          <button key={v} type="button" aria-pressed={viewType === v} onClick={() => onView(v)}>
            {t(`review.${v}`)}
          </button>
        ))}
      </span>
      <span className={styles.muted}>{t('review.keys')}</span>
    </div>
  );
}

const NO_COMMENTS: LineComment[] = [];
