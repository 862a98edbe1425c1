package src

func short() {
	_ = 1
}

func long() {
	_ = 1
	_ = 2
	_ = 3
	_ = 4
	_ = 5
}

type T struct{}

func (*T) long() {
	_ = 1
	_ = 2
	_ = 3
	_ = 4
}

type G[P any] struct{}

func (G[P]) long() {
	_ = 1
	_ = 2
	_ = 3
	_ = 4
}
