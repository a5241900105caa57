// What `holdfast serve` (src/server) and the app in a browser (src/renderer/api) agree on.

/** The request header that carries the session token of `holdfast serve`. */
export const TOKEN_HEADER = 'x-holdfast-token';
