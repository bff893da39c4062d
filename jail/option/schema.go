package option

// Schema is one row as `scidex-jail profiles --schema` prints it, beside
// the limits: its names in each language ("" where it cannot be given
// there), its type and its help. Choices are the words a Choice takes.
type Schema struct {
	Name         string   `json:"name"`
	Type         Type     `json:"type"`
	Flag         string   `json:"flag"`
	ProfileField string   `json:"profile_field"`
	RequestField string   `json:"request_field"`
	Keyword      string   `json:"keyword"`
	Help         string   `json:"help"`
	Choices      []string `json:"choices,omitempty"`
}

// Schemas are the table as data, in its order; choices gives a Choice
// row's words (the network modes are jail/netmode's to list).
func Schemas(choices func(*Option) []string) []Schema {
	out := make([]Schema, 0, len(All))
	for _, o := range All {
		s := Schema{
			Name: o.Request, Type: o.Type, ProfileField: o.Field, RequestField: o.Request, Keyword: o.Keyword, Help: o.Help,
		}
		if s.Name == "" {
			s.Name = o.Field
		}
		if o.Flag != "" {
			s.Flag = Origin{}.Name(o)
		}
		if o.Type == Choice {
			s.Choices = choices(o)
		}
		out = append(out, s)
	}
	return out
}
