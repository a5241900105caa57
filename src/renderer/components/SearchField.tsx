// The search box of the app's toolbars (images, fleet matrix): a labelled search input with its
// icon, no autocomplete or spell check (image names and digests are not words).
import { SearchIcon } from './icons';

export function SearchField(props: { id: string; label: string; placeholder: string; value: string; onChange(value: string): void; testId: string }) {
  return (
    <div className="search">
      <label htmlFor={props.id} className="visually-hidden">
        {props.label}
      </label>
      <SearchIcon className="search-icon" />
      <input
        id={props.id}
        type="search"
        placeholder={props.placeholder}
        value={props.value}
        onChange={(e) => props.onChange(e.target.value)}
        data-testid={props.testId}
        autoComplete="off"
        spellCheck={false}
      />
    </div>
  );
}
