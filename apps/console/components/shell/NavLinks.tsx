"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";

const LINKS = [
  { href: "/", label: "Overview" },
  { href: "/tasks", label: "Tasks" },
  { href: "/dead-letters", label: "Dead letters" },
  { href: "/schedules", label: "Schedules" },
  { href: "/workflows", label: "Workflows" },
  { href: "/queues", label: "Queues" },
  { href: "/webhooks", label: "Webhooks" },
  { href: "/api-keys", label: "API keys" },
  { href: "/usage", label: "Usage & limits" },
] as const;

export function NavLinks() {
  const pathname = usePathname();
  const isCurrent = (href: string) => (href === "/" ? pathname === "/" : pathname === href || pathname.startsWith(`${href}/`));
  return (
    <ul className="nav-list">
      {LINKS.map((link) => (
        <li key={link.href}>
          <Link className="nav-link" href={link.href} aria-current={isCurrent(link.href) ? "page" : undefined}>
            {link.label}
          </Link>
        </li>
      ))}
    </ul>
  );
}
