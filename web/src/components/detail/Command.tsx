/** A command or fragment to copy, kept as written (a <pre>): the ways out of a diff gate refusal and of a merge conflict. */
import styles from './Detail.module.css';

export function Command({ text }: { text: string }) {
  return (
    <pre className={styles.command}>
      <code>{text}</code>
    </pre>
  );
}
