/**
 * Edit the fields a person sets on a task (PATCH /api/tasks/:id, as `maestro task edit`): title, priority,
 * complexity, dependencies, owned files, type, scope, expected output and spec. Edit is offered in the statuses
 * the daemon takes an edit in (EDITABLE_STATUSES, the store's own list); what a field may not become there (a
 * dependency added to work already started, a cycle, a cancelled dependency) the daemon decides, and its
 * refusal is shown under the form as it said it, the form kept. The dependency box offers neither a cancelled
 * task nor one that waits for this one (DepPicker), but the board's tasks may be fewer or older than the daemon's.
 * Only the fields changed since the form opened are sent (editDraft.ts). The plan is not offered: once proposed it
 * changes by a rejection with a reason.
 */
import { useEffect, useRef, useState, type FormEvent, type RefObject } from 'react';
import { useTranslation } from 'react-i18next';
import { api } from '../../api/client.js';
import { EDITABLE_STATUSES, type Task } from '../../api/types.js';
import { errorText } from '../reasons.js';
import { changedFields, draftOf, FIELD_LABEL, type Draft } from './editDraft.js';
import { EditFields } from './EditFields.js';
import styles from './Detail.module.css';

export function EditTask({ task, onDone }: { task: Task; onDone(): void }) {
  const { t, i18n } = useTranslation();
  // The task as the form opened on it: what a change is measured against.
  const [opened, setOpened] = useState<{ before: Task; draft: Draft } | null>(null);
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState<{ ok: boolean; text: string } | null>(null);
  const editButton = useRef<HTMLButtonElement>(null);
  const wasOpen = useRef(false);
  const editable = EDITABLE_STATUSES.includes(task.status);

  // Closing the form gives the keyboard back to Edit.
  useEffect(() => {
    if (wasOpen.current && !opened) editButton.current?.focus();
    wasOpen.current = opened !== null;
  }, [opened]);

  if (!opened) return <EditOffer editable={editable} saved={note?.ok ? note.text : null} button={editButton} onOpen={() => (setOpened({ before: task, draft: draftOf(task) }), setNote(null))} />;

  const changes = changedFields(opened.before, opened.draft);
  const changed = Object.keys(changes) as (keyof typeof FIELD_LABEL)[];
  const save = async (e: FormEvent) => {
    e.preventDefault();
    if (!changed.length || !editable || busy) return;
    setBusy(true);
    setNote(null);
    try {
      await api.editTask(task.id, changes);
      setNote({ ok: true, text: t('edit.saved', { fields: changed.map((k) => t(FIELD_LABEL[k])).join(', ') }) });
      setOpened(null);
      onDone();
    } catch (err) {
      setNote({ ok: false, text: errorText(t, i18n.language, err) });
    } finally {
      setBusy(false);
    }
  };
  const cancel = () => (setOpened(null), setNote(null));
  return (
    <form
      className={styles.section}
      aria-labelledby="edit-h"
      data-testid="task-edit"
      onSubmit={(e) => void save(e)}
      onKeyDown={(e) => {
        // Escape leaves the form, not the task behind it.
        if (e.key !== 'Escape') return;
        e.stopPropagation();
        cancel();
      }}
    >
      <h3 id="edit-h">{t('edit.heading')}</h3>
      <EditFields taskId={task.id} draft={opened.draft} onChange={(draft) => setOpened({ ...opened, draft })} />
      {!editable && (
        <p role="status" className={styles.err}>
          {t('edit.noLonger', { status: t(`status.${task.status}`) })}
        </p>
      )}
      <div className={styles.row}>
        <button type="submit" disabled={busy || !editable || !changed.length}>
          {t('edit.save')}
        </button>
        <button type="button" onClick={cancel}>
          {t('edit.discard')}
        </button>
        {!changed.length && <span className={styles.muted}>{t('edit.unchanged')}</span>}
      </div>
      {note && !note.ok && (
        <p role="alert" className={styles.err} data-testid="edit-refused">
          {note.text}
        </p>
      )}
    </form>
  );
}

/** Edit, where the task takes an edit, and what the last save changed. */
function EditOffer({ editable, saved, button, onOpen }: { editable: boolean; saved: string | null; button: RefObject<HTMLButtonElement | null>; onOpen(): void }) {
  const { t } = useTranslation();
  if (!editable && !saved) return null;
  return (
    <div className={styles.row} data-testid="task-edit">
      {editable && (
        <button ref={button} onClick={onOpen}>
          {t('edit.edit')}
        </button>
      )}
      {saved && <span role="status" className={styles.ok}>{saved}</span>}
    </div>
  );
}
