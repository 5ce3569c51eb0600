import { prettyJson } from "@/lib/format";

export function JsonBlock({ value, empty, label }: { value: unknown; empty: string; label: string }) {
  const text = prettyJson(value);
  if (text === null) return <p className="muted">{empty}</p>;
  return (
    <pre className="json" tabIndex={0} aria-label={label}>
      <code>{text}</code>
    </pre>
  );
}
