/**
 * What the diff gate refused of a task that needs attention for it (the task detail's `diffGate`), with the ways
 * out that fit, as `maestro task show` says them: each limit it went over with its numbers, its key in
 * `.maestro/config.json` and the fragment that raises it; the files outside ownedFiles with the `task edit` that adds
 * them; narrowing the task; files too large and gitlinks, committed or still in the worktree; and what a retry does
 * (TaskActions has its button). The commands are core/diffGateWays.ts's, the CLI's own. Names the agent chose
 * (paths) are drawn with oneLine() and only as React text: a translation with markup (<Trans>) gets them as its
 * components' children, never as values it would parse.
 */
import type { ReactElement } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { diffStatCommand, EDIT_NAMES_AT_MOST, narrowCommand, ownedFilesEdit, PROJECT_CONFIG_FILE, raiseLimitJson, type DiffGateRefusal, type RaisableLimit, type Task } from '../../api/types.js';
import { oneLine } from '../hiddenChars.js';
import { Command } from './Command.js';
import styles from './Detail.module.css';

/** How many names of a list the panel shows; the count says how many more (`task diff --stat` lists them all). */
const NAMES_SHOWN = EDIT_NAMES_AT_MOST;

export function DiffGatePanel({ task, gate }: { task: Task; gate: DiffGateRefusal | null }) {
  const { t } = useTranslation();
  if (!gate) return null;
  const narrowable = gate.lines || gate.files || gate.outsideOwned;
  return (
    <section className={`${styles.section} ${styles.refusal}`} aria-labelledby="diff-gate-h" data-testid="diff-gate">
      <h3 id="diff-gate-h" className={styles.refusalHead}>
        <Trans i18nKey="diffGate.title" components={{ run: <code>{gate.runId}</code> }} />
      </h3>
      <ul className={styles.refusals}>
        {gate.lines && <OverLimit testId="diff-gate-lines" what="diffGate.lines" limit="maxDiffLines" over={gate.lines} />}
        {gate.files && <OverLimit testId="diff-gate-files" what="diffGate.files" limit="maxDiffFiles" over={gate.files} />}
        {gate.outsideOwned && <OutsideOwned task={task} outside={gate.outsideOwned} />}
        {gate.largeFiles && <LargeFiles large={gate.largeFiles} committed={gate.committed} />}
        {gate.strayGitlinks.length > 0 && <StrayGitlinks paths={gate.strayGitlinks} committed={gate.committed} />}
      </ul>
      {narrowable && (
        <div data-testid="diff-gate-narrow">
          <p>{t('diffGate.narrow', { edit: t('edit.edit') })}</p>
          <Command text={narrowCommand(task.id)} />
        </div>
      )}
      <p data-testid="diff-gate-retry">
        <Trans i18nKey={retryKey(gate)} values={{ retry: t('actions.retry') }} components={{ branch: <code>{gate.branch}</code>, key: <LimitKey limit="maxFileBytes" /> }} />
      </p>
    </section>
  );
}

/**
 * What a retry does: after a refused commit it goes on from it; refused before anything was committed (a file too
 * large, a repository the agent made, still in the worktree), it starts from the branch's last commit, and a file
 * too large left there refuses it again.
 */
function retryKey(gate: DiffGateRefusal) {
  if (gate.committed) return 'diffGate.retry' as const;
  return gate.largeFiles ? ('diffGate.retryUncommittedLarge' as const) : ('diffGate.retryUncommitted' as const);
}

/** A limit of `.maestro/config.json` it went over: the numbers, then the key and the fragment that raises it. */
function OverLimit({ testId, what, limit, over }: { testId: string; what: 'diffGate.lines' | 'diffGate.files'; limit: RaisableLimit; over: { changed: number; limit: number } }) {
  return (
    <li data-testid={testId}>
      <p>
        <Trans i18nKey={what} values={{ changed: over.changed, limit: over.limit }} components={{ key: <LimitKey limit={limit} /> }} />
      </p>
      <Raise limit={limit} to={over.changed} />
    </li>
  );
}

function OutsideOwned({ task, outside }: { task: Task; outside: { count: number; files: string[] } }) {
  const { t } = useTranslation();
  const edit = ownedFilesEdit(task.id, task.ownedFiles, outside);
  return (
    <li data-testid="diff-gate-outside">
      <p>
        <Trans i18nKey="diffGate.outside" count={outside.count} components={{ owned: <code>{oneLine(task.ownedFiles.join(', ')) || '—'}</code> }} />
      </p>
      <Names names={outside.files} count={outside.count} />
      <p>{edit.named ? t('diffGate.addOwned', { edit: t('edit.edit') }) : <Trans i18nKey="diffGate.addOwnedPaths" values={{ edit: t('edit.edit') }} components={{ stat: <code>{diffStatCommand(task.id)}</code> }} />}</p>
      <Command text={oneLine(edit.command)} />
    </li>
  );
}

function LargeFiles({ large, committed }: { large: { limit: number; files: Array<{ path: string; bytes: number }> }; committed: boolean }) {
  const { t, i18n } = useTranslation();
  const biggest = Math.max(...large.files.map((f) => f.bytes));
  const shown = large.files.slice(0, NAMES_SHOWN);
  return (
    <li data-testid="diff-gate-large">
      <p>
        <Trans i18nKey="diffGate.large" count={large.files.length} values={{ limit: large.limit.toLocaleString(i18n.language) }} components={{ key: <LimitKey limit="maxFileBytes" /> }} />
      </p>
      <ul className={styles.names}>
        {shown.map((f) => (
          <li key={f.path}>
            <code>{oneLine(f.path)}</code> <span className={styles.muted}>{t('diffGate.bytes', { bytes: f.bytes.toLocaleString(i18n.language) })}</span>
          </li>
        ))}
        {large.files.length > shown.length && <li className={styles.muted}>{t('diffGate.more', { count: large.files.length - shown.length })}</li>}
      </ul>
      <p>
        <Trans i18nKey={committed ? 'diffGate.largeWays' : 'diffGate.largeWaysUncommitted'} components={{ ignore: <code>.gitignore</code> }} />
      </p>
      <Raise limit="maxFileBytes" to={biggest} />
    </li>
  );
}

/** Committed as gitlinks (the diff gate), or made in the worktree and refused before the commit, their .git moved out (git/embedded.ts). */
function StrayGitlinks({ paths, committed }: { paths: string[]; committed: boolean }) {
  const { t } = useTranslation();
  return (
    <li data-testid="diff-gate-gitlinks">
      <p>
        {t(committed ? 'diffGate.gitlinks' : 'diffGate.embedded', { count: paths.length })}
      </p>
      <Names names={paths} count={paths.length} />
      <p>
        <Trans i18nKey={committed ? 'diffGate.gitlinkWays' : 'diffGate.embeddedWays'} components={{ dotgit: <code>.git</code>, submodule: <code>{'git submodule add <url>'}</code> }} />
      </p>
    </li>
  );
}

/** The sentence that names the key to raise and the number, then the fragment of `.maestro/config.json`. */
function Raise({ limit, to }: { limit: RaisableLimit; to: number }) {
  return (
    <>
      <p>
        <Trans i18nKey="diffGate.raise" values={{ to }} components={{ key: <LimitKey limit={limit} />, config: <code>{PROJECT_CONFIG_FILE}</code> }} />
      </p>
      <Command text={raiseLimitJson(limit, to)} />
    </>
  );
}

function LimitKey({ limit }: { limit: RaisableLimit }): ReactElement {
  return <code>{`limits.${limit}`}</code>;
}

/** The first NAMES_SHOWN of `names`, then how many more of `count` there are. */
function Names({ names, count }: { names: readonly string[]; count: number }) {
  const { t } = useTranslation();
  const shown = names.slice(0, NAMES_SHOWN);
  return (
    <ul className={styles.names}>
      {shown.map((name) => (
        <li key={name}>
          <code>{oneLine(name)}</code>
        </li>
      ))}
      {count > shown.length && <li className={styles.muted}>{t('diffGate.more', { count: count - shown.length })}</li>}
    </ul>
  );
}
