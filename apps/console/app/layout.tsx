import type { Metadata, Viewport } from "next";
import type { ReactNode } from "react";
import "./styles/base.css";
import "./styles/shell.css";
import "./styles/components.css";
import "./styles/forms.css";
import "./styles/tables.css";
import "./styles/pages.css";
// Last: the narrow-screen overrides.
import "./styles/responsive.css";

export const metadata: Metadata = {
  title: { default: "Tasklane console", template: "%s · Tasklane" },
  description: "See and steer your Tasklane tasks, queues, schedules, workflows and webhooks.",
};

export const viewport: Viewport = { width: "device-width", initialScale: 1 };

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>{children}</body>
    </html>
  );
}
