import { Fragment } from 'react';
import { visibleControls } from '../../shared/visibleControls';

/**
 * Allow line breaks after "/" and before ":" or "@" so long references wrap at sensible places.
 * The text (a reference or a path from a node) shows its control and bidi characters as `\uXXXX`.
 */
export function breakable(text: string) {
  const parts = visibleControls(text).split(/(?<=\/)|(?=@)|(?<!sha256)(?=:)/);
  return parts.map((part, i) => (
    <Fragment key={i}>
      {i > 0 ? <wbr /> : null}
      {part}
    </Fragment>
  ));
}
