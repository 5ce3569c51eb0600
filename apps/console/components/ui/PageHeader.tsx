import type { ReactNode } from "react";

export function PageHeader({ title, description, actions, breadcrumb }: { title: ReactNode; description?: ReactNode; actions?: ReactNode; breadcrumb?: ReactNode }) {
  return (
    <header className="page-header">
      <div>
        {breadcrumb ? <nav className="breadcrumb" aria-label="Breadcrumb">{breadcrumb}</nav> : null}
        <h1>{title}</h1>
        {description ? <p>{description}</p> : null}
      </div>
      {actions ? <div className="page-actions">{actions}</div> : null}
    </header>
  );
}
