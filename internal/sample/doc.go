// Package sample holds the image that gocu demo and the tutorial convert to
// grayscale: a 512x512 landscape drawn by this package's own code (scene.go),
// so it carries no licence but the module's. The PNG is embedded in the
// binary; regenerate it with
//
//	go test ./internal/sample -run TestSamplePNG -update
//
// The test checks that the committed file is what the code draws.
package sample
