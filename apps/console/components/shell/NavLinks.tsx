"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";
import { useEffect, useRef } from "react";

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
  const listRef = useRef<HTMLUListElement>(null);
  // On a narrow screen the links are one row that scrolls sideways: bring the current one into view.
  // scrollLeft of the list only (scrollIntoView could scroll the page too); a no-op when nothing overflows.
  useEffect(() => {
    const list = listRef.current;
    const current = list?.querySelector<HTMLElement>('[aria-current="page"]');
    if (!list || !current || list.scrollWidth <= list.clientWidth) return;
    const listBox = list.getBoundingClientRect();
    const box = current.getBoundingClientRect();
    if (box.left >= listBox.left && box.right <= listBox.right) return;
    list.scrollLeft += box.left - listBox.left - (listBox.width - box.width) / 2;
  }, [pathname]);
  return (
    <ul className="nav-list" ref={listRef}>
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
