// ApplicationFailure types shared by activities (which throw them) and workflows (which must not retry them).
// Deterministic module: workflows import it.

/** The row an activity works on does not exist: retrying cannot make it appear. */
export const RESOURCE_NOT_FOUND = 'ResourceNotFound';
