import { Fragment } from 'react';

/** Allow line breaks after "/" and before ":" or "@" so long references wrap at sensible places. */
export function breakable(ref: string) {
  const parts = ref.split(/(?<=\/)|(?=@)|(?<!sha256)(?=:)/);
  return parts.map((part, i) => (
    <Fragment key={i}>
      {i > 0 ? <wbr /> : null}
      {part}
    </Fragment>
  ));
}
