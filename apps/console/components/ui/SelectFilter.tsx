/**
 * A list's one-choice filter as a plain GET form: the URL is the state, and a
 * new choice starts at the list's first page (no cursor is carried over).
 */
export function SelectFilter({
  action,
  label,
  formLabel,
  id,
  name,
  value,
  anyLabel,
  options,
}: {
  /** Where the form goes; omitted: the page it is on. */
  action?: string;
  label: string;
  /** The search landmark's name. */
  formLabel: string;
  id: string;
  name: string;
  value: string | undefined;
  /** The first option, which filters nothing. */
  anyLabel: string;
  options: readonly string[];
}) {
  return (
    <form method="get" {...(action ? { action } : {})} className="card filters" role="search" aria-label={formLabel}>
      <div className="field">
        <label htmlFor={id}>{label}</label>
        <select id={id} name={name} defaultValue={value ?? ""}>
          <option value="">{anyLabel}</option>
          {options.map((option) => (
            <option key={option} value={option}>
              {option}
            </option>
          ))}
        </select>
      </div>
      <div className="actions">
        <button type="submit" className="button">
          Show
        </button>
      </div>
    </form>
  );
}
