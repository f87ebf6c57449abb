/** The changed files as a folder tree; a file is a button that brings it into view. */
import { memo } from 'react';
import { useTranslation } from 'react-i18next';
import type { DiffFile } from '../../api/types.js';
import type { TreeNode } from './diffModel.js';
import styles from './Review.module.css';
import { oneLine } from '../hiddenChars.js';

interface Props {
  tree: TreeNode[];
  files: DiffFile[];
  current: number;
  commentsByFile: Record<string, number>;
  onPick(index: number): void;
}

function Nodes({ nodes, ...rest }: Props & { nodes: TreeNode[] }) {
  const { t } = useTranslation();
  const { files, current, commentsByFile, onPick } = rest;
  return (
    <ul className={styles.treeList}>
      {nodes.map((n) =>
        n.file === undefined ? (
          <li key={`d:${n.name}`}>
            <span className={styles.dir}>{oneLine(n.name)}/</span>
            <Nodes {...rest} nodes={n.children} />
          </li>
        ) : (
          <li key={`f:${n.file}`}>
            <button
              type="button"
              className={`${styles.treeFile} ${n.file === current ? styles.treeCurrent : ''}`}
              aria-current={n.file === current ? 'true' : undefined}
              title={oneLine(files[n.file]!.path)}
              onClick={() => onPick(n.file!)}
            >
              <span className={`${styles.dot} ${styles[files[n.file]!.status] ?? ''}`} aria-hidden="true" />
              <span className={styles.treeName}>{oneLine(n.name)}</span>
              {commentsByFile[files[n.file]!.path] ? (
                <span className={styles.count} title={t('review.commentCount', { count: commentsByFile[files[n.file]!.path] })}>
                  ({commentsByFile[files[n.file]!.path]})
                </span>
              ) : null}
            </button>
          </li>
        ),
      )}
    </ul>
  );
}

export const FileTree = memo(function FileTree(props: Props) {
  const { t } = useTranslation();
  return (
    <nav className={styles.tree} aria-label={t('review.files')}>
      <Nodes {...props} nodes={props.tree} />
    </nav>
  );
});
