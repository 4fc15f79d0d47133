// states.js: a link's state in words, and what to do about it.

export const linkStates = {
  active: { label: 'Active', advice: 'The link serves its destination.' },
  expired: { label: 'Expired', advice: 'Visitors go to the expiry page. Clear or move the expiry date to serve it again.' },
  conflict: { label: 'Key conflict', advice: 'An older link of the workspace holds this key on this domain. Change the key, or delete the other link.' },
  no_domain: { label: 'Domain pending', advice: 'No domain of the workspace serves this hostname yet: add the domain, or publish its DNS record (Domains page).' },
  pending: { label: 'Not checked yet', advice: 'kurz has not checked this link yet; this usually takes a moment.' },
};

export const stateFilters = ['active', 'expired', 'conflict', 'no_domain'];
