package tickettest

import "fmt"

// CheckStream checks what a receiver saw and returns what is wrong with it:
// an event (object, type and instance) that came with two webhook-ids, a
// fulfilment before its request was filed, a request after its
// cancellation. Duplicates with the same webhook-id are allowed: delivery
// is at least once.
func CheckStream(got []Delivery) []string {
	var problems []string
	ids := map[string]string{}
	accepted := map[string]bool{}
	cancelled := map[string]bool{}
	for _, d := range got {
		k := fmt.Sprint(d.Object, " ", d.Type, " ", d.Data["instance"])
		if id, ok := ids[k]; ok && id != d.ID {
			problems = append(problems, fmt.Sprintf("%s came with two webhook-ids, %s and %s", k, id, d.ID))
		}
		ids[k] = d.ID
		switch d.Type {
		case "hardware.requested":
			if cancelled[d.Object] {
				problems = append(problems, fmt.Sprintf("%s requested after its cancellation (seq %d)", d.Object, d.Seq))
			}
			if d.Accepted {
				accepted[d.Object] = true
			}
		case "hardware.fulfilled":
			if !accepted[d.Object] {
				problems = append(problems, fmt.Sprintf("%s fulfilled (seq %d) before its request was accepted", d.Object, d.Seq))
			}
		case "hardware.cancelled":
			cancelled[d.Object] = true
		}
	}
	return problems
}
