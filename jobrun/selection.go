package jobrun

type selections struct{ s *Service }

func (x *selections) init(s *Service) { x.s = s }
