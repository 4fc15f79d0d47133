package restapi

import (
	kurzv1alpha1 "github.com/kurz-dev/kurz/api/v1alpha1"
	"github.com/kurz-dev/kurz/internal/linkquery"
)

// linkStatePending is the state of a link the controller has not judged
// yet (just created, or applied while it was down), or judged with a
// reason this kurz does not know. It is no filter value: the state filter
// matches what the controller said, and it said nothing yet.
const linkStatePending = "pending"

// linkStateNames are the state field's values, the state filter's
// (linkStates) read backwards.
var linkStateNames = func() map[linkquery.State]string {
	m := make(map[linkquery.State]string, len(linkStates))
	for name, st := range linkStates {
		m[st] = name
	}
	return m
}()

// linkState is a link's state and the controller's message about it (nil
// while pending). It reads what the state filter reads, so a link listed
// by state=expired answers state "expired".
func linkState(l *kurzv1alpha1.Link) (string, *string) {
	name, ok := linkStateNames[linkquery.StateOf(l)]
	if !ok {
		return linkStatePending, nil
	}
	for i := range l.Status.Conditions {
		if c := &l.Status.Conditions[i]; c.Type == kurzv1alpha1.ConditionReady && c.Message != "" {
			return name, ptrTo(c.Message)
		}
	}
	return name, nil
}
