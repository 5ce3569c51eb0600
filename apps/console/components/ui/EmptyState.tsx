import type { ReactNode } from "react";

/** What a list shows when there is nothing in it: what would be here, and how to get some. */
export function EmptyState({ title, children, action, icon = "○" }: { title: string; children?: ReactNode; action?: ReactNode; icon?: string }) {
  return (
    <section className="state" aria-label={title}>
      <div className="state-icon" aria-hidden="true">
        {icon}
      </div>
      <h2>{title}</h2>
      {children ? <p>{children}</p> : null}
      {action}
    </section>
  );
}
