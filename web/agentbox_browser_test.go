package web_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/lumen-home/lumen/agent/agenttest"
)

// The Agent panel follows the light's agent: with no model, a box for
// everyday commands and a line saying how to configure one, and no
// microphone; with a model, the full chat.
func TestPageAgentBox(t *testing.T) {
	t.Parallel()
	sec := `section[data-light="demo"]`
	t.Run("no model", func(t *testing.T) {
		t.Parallel()
		b := newBrowser(t)
		_, nc := openPage(t, b)
		b.do(t, "open the agent", chromedp.Click(chromedp.CSS(sec+` details.agent summary`)))
		if eval[bool](t, b, `!!document.querySelector('`+sec+` .mic')`) {
			t.Error("a microphone with no model to transcribe it")
		}
		if got := b.text(t, sec+` .configure`); !strings.Contains(got, "LUMEN_MODEL") || !strings.Contains(got, "OPENAI_BASE_URL") {
			t.Errorf("the configure line: %q", got)
		}
		if got := b.text(t, sec+` .everyday`); !strings.Contains(got, "everyday commands still work") {
			t.Errorf("the everyday line: %q", got)
		}
		if got := b.text(t, sec+` form.ask button[type=submit]`); got != "Say it" {
			t.Errorf("the box's button says %q", got)
		}
		request(t, nc, "power", `{"on":true}`)
		waitLight(t, b, nc, "on", func(g lightGet) bool { return g.State != "off" })
		b.do(t, "say it", chromedp.SendKeys(chromedp.CSS(sec+` form.ask input`), "turn it off"),
			chromedp.Click(chromedp.CSS(sec+` form.ask button[type=submit]`)))
		waitState(t, b, nc, "demo", "off")
		b.waitPage(t, "the answer", `document.querySelector('`+sec+` .chat').textContent.includes("done:")`)
		if chat := b.text(t, sec+` .chat`); !strings.Contains(chat, "page: turn it off") {
			t.Errorf("the chat:\n%s", chat)
		}
		// Beyond everyday commands, the answer says what a model would do.
		b.do(t, "ask for more", chromedp.SendKeys(chromedp.CSS(sec+` form.ask input`), "write me a poem about lamps"),
			chromedp.Click(chromedp.CSS(sec+` form.ask button[type=submit]`)))
		b.waitPage(t, "the refusal", `!!document.querySelector('`+sec+` .chat li.fail')`)
		if got := b.text(t, sec+` .chat li.fail`); !strings.Contains(got, "LUMEN_MODEL") {
			t.Errorf("the refusal does not say how to configure a model: %q", got)
		}
	})
	t.Run("model", func(t *testing.T) {
		t.Parallel()
		srv := agenttest.New()
		defer srv.Close()
		b := newBrowser(t)
		openPage(t, b, "--openai-base-url", srv.BaseURL(), "--model", "scripted")
		b.do(t, "open the agent", chromedp.Click(chromedp.CSS(sec+` details.agent summary`)))
		for _, sel := range []string{` .mic`, ` form.ask input[aria-label="ask the agent"]`, ` .mic-why`} {
			if !eval[bool](t, b, `!!document.querySelector('`+sec+sel+`')`) {
				t.Errorf("the full chat lacks %s", sel)
			}
		}
		for _, sel := range []string{` .configure`, ` .everyday`} {
			if eval[bool](t, b, `!!document.querySelector('`+sec+sel+`')`) {
				t.Errorf("with a model, the chat still has %s", sel)
			}
		}
		if got := b.text(t, sec+` form.ask button[type=submit]`); got != "Send" {
			t.Errorf("the chat's button says %q", got)
		}
	})
}
