//go:build linux

package connpark

// connList is an intrusive doubly linked list of waiting or parked
// connections. All of a list's connections entered it with the same timeout
// (or linger), so appending keeps it ordered by deadline: the sweep pops
// expired ones from the front, and a connection that wakes is unlinked in
// O(1), without a timer per connection.
type connList struct {
	head, tail *conn
	n          int
}

func (l *connList) pushBack(c *conn) {
	c.list, c.prev, c.next = l, l.tail, nil
	if l.tail != nil {
		l.tail.next = c
	} else {
		l.head = c
	}
	l.tail = c
	l.n++
}

func (l *connList) remove(c *conn) {
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		l.head = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	} else {
		l.tail = c.prev
	}
	c.list, c.prev, c.next = nil, nil, nil
	l.n--
}
