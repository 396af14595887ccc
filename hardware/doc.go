// Package hardware will hold the LED and button role interfaces, the
// go-rpio driver, the simulator and gesture detection (issue: hardware
// actor). Until then `lumen up` runs lights without a device.
package hardware
