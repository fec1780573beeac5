package gocu

// Linking package prof makes GOCU_PROFILE=out.json profile every program
// that uses gocu: prof starts recording when it is initialised (see its
// documentation). Without the variable it costs nothing.
import _ "github.com/gocu-dev/gocu/prof"
