/**
 * The inputs of the task edit form, each with its label. Titles are shown as the board shows them (`visible`):
 * the title box holds the text itself, and when that holds characters drawn as nothing or that reorder the text,
 * the title as the board shows it is said under the box. Dependencies are picked among the project's tasks
 * by title or id (DepPicker).
 */
import { useTranslation } from 'react-i18next';
import { COMPLEXITIES, PRIORITIES, TASK_SCOPES, TASK_TYPES } from '../../api/types.js';
import { useTasks } from '../../stores/tasks.js';
import { hasHidden, visible } from '../hiddenChars.js';
import { DepPicker } from './DepPicker.js';
import type { Draft } from './editDraft.js';
import styles from './Detail.module.css';

export function EditFields({ taskId, draft, onChange }: { taskId: string; draft: Draft; onChange(draft: Draft): void }) {
  const { t } = useTranslation();
  const set = <K extends keyof Draft>(key: K, value: Draft[K]) => onChange({ ...draft, [key]: value });
  return (
    <div className={styles.editFields}>
      <label htmlFor="edit-title">{t('field.title')}</label>
      <div>
        <input id="edit-title" autoFocus className={styles.wide} value={draft.title} maxLength={500} onChange={(e) => set('title', e.target.value)} />
        {hasHidden(draft.title) && <p className={styles.muted}>{t('edit.hiddenTitle', { title: visible(draft.title) })}</p>}
      </div>
      <label htmlFor="edit-priority">{t('field.priority')}</label>
      <select id="edit-priority" value={draft.priority} onChange={(e) => set('priority', Number(e.target.value) as Draft['priority'])}>
        {PRIORITIES.map((p) => (
          <option key={p} value={p}>{`P${p}`}</option>
        ))}
      </select>
      <label htmlFor="edit-complexity">{t('field.complexity')}</label>
      <select id="edit-complexity" value={draft.complexity} onChange={(e) => set('complexity', e.target.value as Draft['complexity'])}>
        {COMPLEXITIES.map((c) => (
          <option key={c} value={c}>{t(`complexity.${c}`)}</option>
        ))}
      </select>
      <label htmlFor="edit-type">{t('field.type')}</label>
      <select id="edit-type" value={draft.taskType} onChange={(e) => set('taskType', e.target.value as Draft['taskType'])}>
        <option value="">{t('edit.notSet')}</option>
        {TASK_TYPES.map((k) => (
          <option key={k} value={k}>{t(`taskType.${k}`)}</option>
        ))}
      </select>
      <label htmlFor="edit-scope">{t('field.scope')}</label>
      <select id="edit-scope" value={draft.scope} onChange={(e) => set('scope', e.target.value as Draft['scope'])}>
        <option value="">{t('edit.notSet')}</option>
        {TASK_SCOPES.map((k) => (
          <option key={k} value={k}>{t(`scope.${k}`)}</option>
        ))}
      </select>
      <DepsField taskId={taskId} deps={draft.deps} onChange={(deps) => set('deps', deps)} />
      <label htmlFor="edit-owned">{t('field.ownedFiles')}</label>
      <div>
        <textarea id="edit-owned" className={styles.textarea} value={draft.ownedFiles} aria-describedby="edit-owned-help" onChange={(e) => set('ownedFiles', e.target.value)} />
        <span id="edit-owned-help" className={styles.muted}>{t('edit.ownedFilesHelp')}</span>
      </div>
      <label htmlFor="edit-expected">{t('field.expected')}</label>
      <textarea id="edit-expected" className={styles.textarea} value={draft.expectedOutput} maxLength={10_000} onChange={(e) => set('expectedOutput', e.target.value)} />
      <label htmlFor="edit-spec">{t('detail.spec')}</label>
      <textarea id="edit-spec" className={`${styles.textarea} ${styles.tall}`} value={draft.spec} onChange={(e) => set('spec', e.target.value)} />
    </div>
  );
}

/**
 * The tasks this one waits for, each with a button that drops it, and a box to find and add another among the
 * project's tasks (DepPicker, which says which it offers: a task that waits for this one it shows disabled, as
 * it would close a cycle). A cycle through a task the board has not loaded only the daemon sees; it refuses the save.
 * The new-task form uses it too, with no task yet (`taskId` ''): nothing waits for a task not made.
 */
export function DepsField({ taskId, deps, onChange, inputId }: { taskId: string; deps: string[]; onChange(deps: string[]): void; inputId?: string }) {
  const { t } = useTranslation();
  const byId = useTasks((s) => s.byId);
  const name = (id: string) => (byId[id] ? visible(byId[id].title) : id);
  return (
    <fieldset className={styles.span2}>
      <legend>{t('field.deps')}</legend>
      {deps.length ? (
        <ul className={styles.plainList}>
          {deps.map((id) => (
            <li key={id}>
              {name(id)}{' '}
              <button type="button" aria-label={t('edit.removeDep', { title: name(id) })} onClick={() => onChange(deps.filter((d) => d !== id))}>
                {t('edit.remove')}
              </button>
            </li>
          ))}
        </ul>
      ) : (
        <p className={styles.muted}>{t('edit.noDeps')}</p>
      )}
      <DepPicker taskId={taskId} deps={deps} tasks={byId} onAdd={(id) => onChange([...deps, id])} inputId={inputId} />
    </fieldset>
  );
}
