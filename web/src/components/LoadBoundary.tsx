/**
 * Around a part of the board fetched when first opened (a screen, a task's review panel): when its file does not
 * arrive (the daemon is down, or restarted with a new build whose file names changed) React throws, and without a
 * boundary the whole page went blank until reloaded. This says so in the part's place and offers a reload; the
 * rest of the page goes on. React.lazy keeps a failed import failed, so only a reload fetches it again.
 */
import { Component, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';

function LoadFailed({ message }: { message: string }) {
  const { t } = useTranslation();
  return (
    <section role="alert" style={{ padding: 12 }}>
      <p>{t('app.loadFailed', { message })}</p>
      <button onClick={() => window.location.reload()}>{t('app.reload')}</button>
    </section>
  );
}

export class LoadBoundary extends Component<{ children: ReactNode }, { error: Error | null }> {
  override state: { error: Error | null } = { error: null };

  static getDerivedStateFromError(error: unknown): { error: Error } {
    return { error: error instanceof Error ? error : new Error(String(error)) };
  }

  override render() {
    return this.state.error ? <LoadFailed message={this.state.error.message} /> : this.props.children;
  }
}
