import type { Metadata } from "next";
import type { ReactNode } from "react";

export const metadata: Metadata = {
  title: "Tasklane console",
  description: "See and steer Tasklane tenants, queues and tasks.",
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body style={{ fontFamily: "system-ui, sans-serif", margin: "3rem auto", maxWidth: "40rem", lineHeight: 1.5 }}>
        {children}
      </body>
    </html>
  );
}
